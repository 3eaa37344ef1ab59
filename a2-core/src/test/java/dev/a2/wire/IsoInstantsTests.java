package dev.a2.wire;

import java.time.Instant;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A client parses {@code createdAt}; it must read exactly as {@link Instant#toString()} wrote it before. */
class IsoInstantsTests {

	@Test
	void writesEveryInstantAsInstantToStringDoes() {
		SplittableRandom random = new SplittableRandom(7);
		for (int i = 0; i < 200_000; i++) {
			long seconds = random.nextLong(-100_000_000_000L, 300_000_000_000L);
			int nano = switch (i % 4) {
				case 0 -> 0;
				case 1 -> random.nextInt(1000) * 1_000_000;
				case 2 -> random.nextInt(1_000_000) * 1000;
				default -> random.nextInt(1_000_000_000);
			};
			Instant instant = Instant.ofEpochSecond(seconds, nano);
			assertThat(IsoInstants.format(instant)).as("%s", instant).isEqualTo(instant.toString());
		}
	}

	@Test
	void writesTheEdgesOfDaysYearsAndFractionsAsInstantToStringDoes() {
		String[] edges = { "1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000000001Z", "1999-12-31T23:59:59.999999999Z",
				"2000-02-29T12:00:00.100Z", "2026-12-07T17:45:01.000001Z", "2100-03-01T00:00:00.010Z",
				"9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00Z", "+10000-01-01T00:00:00Z" };
		for (String edge : edges) {
			Instant instant = Instant.parse(edge);
			assertThat(IsoInstants.format(instant)).isEqualTo(instant.toString()).isEqualTo(edge);
		}
	}

}
