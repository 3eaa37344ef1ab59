package dev.a2.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.unit.DataSize;

/**
 * Collects the properties whose values cannot work, each as "{@code <property> must be <what>, was
 * <value>}", so that one start-up failure names them all.
 */
final class PropertyChecks {

	private final List<String> wrong = new ArrayList<>();

	PropertyChecks atLeast(String property, int value, int least) {
		if (value < least) {
			this.wrong.add(property + " must be at least " + least + ", was " + value);
		}
		return this;
	}

	/** A time that must pass before something happens again: zero or less would spin or never wait. */
	PropertyChecks positive(String property, @Nullable Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			this.wrong.add(property + " must be longer than 0 (such as 1s), was " + show(value));
		}
		return this;
	}

	/** A time that may be none (zero) but not less. */
	PropertyChecks notNegative(String property, @Nullable Duration value) {
		if (value == null || value.isNegative()) {
			this.wrong.add(property + " must be 0 or longer, was " + show(value));
		}
		return this;
	}

	/**
	 * A size of a body held in memory: from 1 byte to the most an array holds. A larger one was taken,
	 * and read as a negative limit that refused every push ("at most -2147483648 are accepted").
	 */
	PropertyChecks bodySize(String property, @Nullable DataSize value) {
		if (value == null || value.toBytes() < 1 || value.toBytes() > Integer.MAX_VALUE) {
			this.wrong.add(property + " must be from 1B to " + Integer.MAX_VALUE + "B (such as 256KB), was "
					+ ((value != null) ? value : "empty"));
		}
		return this;
	}

	/** A time that bounds another from above, such as the longest back-off and the first. */
	PropertyChecks noShorter(String property, @Nullable Duration value, String lower, @Nullable Duration lowerValue) {
		// a negative time is reported as such already
		if (value != null && lowerValue != null && !value.isNegative() && !lowerValue.isNegative()
				&& value.compareTo(lowerValue) < 0) {
			this.wrong.add(property + " must be no shorter than " + lower + " (" + show(lowerValue) + "), was " + show(value));
		}
		return this;
	}

	/** A name that must say something: an empty one was taken, and then matched nothing and no one. */
	PropertyChecks notBlank(String property, @Nullable String value) {
		if (value == null || value.isBlank()) {
			this.wrong.add(property + " must not be empty");
		}
		return this;
	}

	/** Fails with every wrong value at once: fixing them one start-up at a time would be slow. */
	void throwIfWrong() {
		if (!this.wrong.isEmpty()) {
			throw new A2PropertiesException(this.wrong);
		}
	}

	/** The duration as a property would say it ({@code -60s}, {@code 250ms}), not {@code PT-1M}. */
	private static String show(@Nullable Duration value) {
		if (value == null) {
			return "empty";
		}
		ChronoUnit unit = (value.getNano() == 0) ? ChronoUnit.SECONDS
				: (value.getNano() % 1_000_000 == 0) ? ChronoUnit.MILLIS : ChronoUnit.NANOS;
		return DurationStyle.SIMPLE.print(value, unit);
	}

}
