package dev.a2.autoconfigure;

import java.time.Duration;

import dev.a2.ai.ReplySettings;
import dev.a2.ai.ReplyStream;
import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** When AI replies are configured, from what, and how they back off to the application's. */
class A2SpringAiAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(A2SpringAiAutoConfiguration.class));

	@Test
	void withSpringAiTheReplyStreamFlushesEvery50MillisecondsByDefault() {
		this.runner.run((context) -> assertThat(context.getBean(ReplyStream.class).settings())
			.isEqualTo(new ReplySettings(Duration.ofMillis(50), 64, "assistant", 8)));
	}

	@Test
	void theFlushIsConfiguredUnderA2Ai() {
		this.runner.withPropertyValues("a2.ai.flush-interval=200ms", "a2.ai.flush-tokens=10", "a2.ai.participant=bot")
			.run((context) -> assertThat(context.getBean(ReplyStream.class).settings())
				.isEqualTo(new ReplySettings(Duration.ofMillis(200), 10, "bot", 8)));
	}

	@Test
	void aBadSettingFailsTheStartWithWhatIsWrong() {
		this.runner.withPropertyValues("a2.ai.flush-tokens=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessage("a2.ai.flush-tokens must be at least 1, was 0"));
	}

	@Test
	void theApplicationsReplyStreamWins() {
		ReplyStream own = new ReplyStream(ReplySettings.DEFAULTS.withParticipant("mine"));
		this.runner.withBean(ReplyStream.class, () -> own)
			.run((context) -> assertThat(context).getBean(ReplyStream.class).isSameAs(own));
	}

	@Test
	void withoutSpringAiNothingIsConfigured() {
		this.runner.withClassLoader(new FilteredClassLoader(ChatModel.class))
			.run((context) -> assertThat(context).doesNotHaveBean(ReplyStream.class));
	}

}
