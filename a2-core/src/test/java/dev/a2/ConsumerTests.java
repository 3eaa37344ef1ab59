package dev.a2;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.mockito.Mockito.mock;

/**
 * A bad consumer definition fails at once, with a message naming the consumer and the fix.
 */
class ConsumerTests {

	private static final Consumer.Handler NOTHING = (context) -> null;

	@Test
	void namesFollowTheRules() {
		assertThat(Consumer.builder("chat", "a").run(NOTHING).name()).isEqualTo("a");
		assertThat(Consumer.builder("chat", "Assistant:v2.reply_1-x").run(NOTHING).name()).isEqualTo("Assistant:v2.reply_1-x");
		assertThat(Consumer.builder("chat", "x".repeat(128)).run(NOTHING).name()).hasSize(128);
		for (String bad : new String[] { "", "-a", ".a", "a b", "a/b", "x".repeat(129) }) {
			assertThatIllegalArgumentException().isThrownBy(() -> Consumer.builder("chat", bad))
				.withMessageContaining("must be 1-128 letters, digits and . _ : -");
		}
		assertThatIllegalArgumentException().isThrownBy(() -> Consumer.builder("chat", "a2.projector"))
			.withMessageContaining("starts with 'a2.'");
	}

	@Test
	void emptyTypesAreAnErrorAndAbsentTypesMeanAll() {
		assertThatIllegalArgumentException().isThrownBy(() -> Consumer.builder("chat", "c").types())
			.withMessageContaining("consumer 'c' lists no types; leave types out to take every type");
		Consumer all = Consumer.builder("chat", "c").run(NOTHING);
		assertThat(all.types()).isNull();
		assertThat(all.takes("message.sent")).isTrue();
		assertThat(all.takes("a2.cleared")).isFalse();
	}

	@Test
	void backfillNeedsAFixedLaneAndNoAbortOn() {
		assertThatIllegalArgumentException().isThrownBy(() -> Consumer.builder("chat", "c").backfill(true).run(NOTHING))
			.withMessageContaining("consumer 'c' backfills, so its lane must be a fixed string");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Consumer.builder("chat", "c")
				.lane(Lane.keyed((input) -> input.session()))
				.backfill(true)
				.run(NOTHING))
			.withMessageContaining("lane must be a fixed string");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Consumer.builder("chat", "c").lane(Lane.fixed("p")).backfill(true).abortOn("note").run(NOTHING))
			.withMessageContaining("can't use abortOn");
		assertThatIllegalArgumentException().isThrownBy(() -> Lane.fixed(""));
	}

	@Test
	void unknownTypesContractsAndDuplicatesFailTheServerBuild() {
		DataSource dataSource = mock(DataSource.class);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> A2Server.builder()
				.dataSource(dataSource)
				.contract(TestContracts.chat())
				.consumer(Consumer.builder("chat", "c").types("message.deleted").run(NOTHING))
				.build())
			.withMessageContaining("consumer 'c' takes type 'message.deleted', which contract 'chat' does not declare");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> A2Server.builder()
				.dataSource(dataSource)
				.contract(TestContracts.chat())
				.consumer(Consumer.builder("chat", "c").abortOn("stop").run(NOTHING))
				.build())
			.withMessageContaining("consumer 'c' aborts on type 'stop', which contract 'chat' does not declare");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> A2Server.builder()
				.dataSource(dataSource)
				.contract(TestContracts.chat())
				.consumer(Consumer.builder("orders", "c").run(NOTHING))
				.build())
			.withMessageContaining("consumer 'c' reads contract 'orders', which is not registered");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> A2Server.builder()
				.dataSource(dataSource)
				.contract(TestContracts.chat())
				.consumer(Consumer.builder("chat", "c").run(NOTHING))
				.consumer(Consumer.builder("chat", "c").run(NOTHING))
				.build())
			.withMessageContaining("contract 'chat' has two consumers named 'c'");
	}

	@Test
	void retryDelaysFollowTheFormula() {
		DrainSettings settings = DrainSettings.DEFAULTS;
		assertThat(settings.retryDelay(1)).hasSeconds(1);
		assertThat(settings.retryDelay(2)).hasSeconds(2);
		assertThat(settings.retryDelay(5)).hasSeconds(16);
		assertThat(settings.retryDelay(9)).hasSeconds(256);
		assertThat(settings.retryDelay(10)).hasMinutes(5);
		assertThat(settings.retryDelay(1000)).hasMinutes(5);
	}

}
