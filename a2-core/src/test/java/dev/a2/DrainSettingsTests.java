package dev.a2;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class DrainSettingsTests {

	@Test
	void theBackOffDoublesFromTheFirstUpToTheLongest() {
		DrainSettings settings = DrainSettings.DEFAULTS.withRetry(Duration.ofSeconds(1), Duration.ofSeconds(5));
		assertThat(settings.retryDelay(1)).hasSeconds(1);
		assertThat(settings.retryDelay(2)).hasSeconds(2);
		assertThat(settings.retryDelay(3)).hasSeconds(4);
		assertThat(settings.retryDelay(4)).hasSeconds(5);
		assertThat(settings.retryDelay(40)).hasSeconds(5);
	}

	/** A longest back-off under the first was taken, and then every back-off was the longest. */
	@Test
	void aLongestBackOffShorterThanTheFirstIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> DrainSettings.DEFAULTS.withRetry(Duration.ofSeconds(10), Duration.ofSeconds(5)))
			.withMessage("retryBase must be 0 or longer and retryMax no shorter than it, were PT10S and PT5S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> DrainSettings.DEFAULTS.withRetry(Duration.ofSeconds(-1), Duration.ofSeconds(5)));
		assertThat(DrainSettings.DEFAULTS.withRetry(Duration.ZERO, Duration.ZERO).retryDelay(3)).isZero();
	}

}
