package dev.a2.wire;

import java.time.Instant;

/**
 * Writes an instant as {@link Instant#toString()} does ({@code 2026-12-07T17:45:01.123456Z}: seconds
 * always, the fraction in groups of three digits as it needs), without its general formatter: every
 * event a push answers or a stream sends carries its {@code createdAt}, and {@code Instant.toString}
 * was about 1% of a push's JVM time (JFR).
 */
final class IsoInstants {

	/** 10000-01-01T00:00:00Z: from there on {@code Instant.toString} writes a sign and more digits. */
	private static final long YEAR_10000 = 253_402_300_800L;

	private static final int[] TENS = { 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000 };

	private IsoInstants() {
	}

	static String format(Instant instant) {
		long seconds = instant.getEpochSecond();
		if (seconds < 0 || seconds >= YEAR_10000) {
			return instant.toString();
		}
		long days = Math.floorDiv(seconds, 86_400);
		int secondOfDay = (int) Math.floorMod(seconds, 86_400);
		// the civil date of a day count (Howard Hinnant's algorithm, eras of 400 years from 0000-03-01)
		long shifted = days + 719_468;
		long era = shifted / 146_097;
		long dayOfEra = shifted - era * 146_097;
		long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
		long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
		long monthIndex = (5 * dayOfYear + 2) / 153;
		int day = (int) (dayOfYear - (153 * monthIndex + 2) / 5 + 1);
		int month = (int) (monthIndex < 10 ? monthIndex + 3 : monthIndex - 9);
		int year = (int) (yearOfEra + era * 400 + (month <= 2 ? 1 : 0));
		int nano = instant.getNano();
		StringBuilder text = new StringBuilder(30);
		digits(text, year, 4).append('-');
		digits(text, month, 2).append('-');
		digits(text, day, 2).append('T');
		digits(text, secondOfDay / 3600, 2).append(':');
		digits(text, secondOfDay / 60 % 60, 2).append(':');
		digits(text, secondOfDay % 60, 2);
		if (nano > 0) {
			text.append('.');
			if (nano % 1_000_000 == 0) {
				digits(text, nano / 1_000_000, 3);
			}
			else if (nano % 1000 == 0) {
				digits(text, nano / 1000, 6);
			}
			else {
				digits(text, nano, 9);
			}
		}
		return text.append('Z').toString();
	}

	/** {@code value} in {@code width} digits (up to 9), zeros in front. */
	private static StringBuilder digits(StringBuilder text, int value, int width) {
		for (int bound = TENS[width - 1]; bound > 1 && value < bound; bound /= 10) {
			text.append('0');
		}
		return text.append(value);
	}

}
