package dev.a2.sample;

import java.time.Duration;

import dev.a2.A2Exception;
import dev.a2.Consumer;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.sample.TourContract.ReplyCompleted;
import dev.a2.testkit.ConsumerRun;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The assistant's code in plain unit tests (the test kit's ConsumerRun): no database, no Spring. */
class AssistantConsumerTests {

	private final Consumer assistant = new AssistantConsumer().assistant(Duration.ZERO);

	private final ConsumerRun run = ConsumerRun.of(new TourContract().chat(), this.assistant);

	@Test
	void aMentionIsAnsweredTokenByTokenAndCompleted() throws Exception {
		MessageSent question = new MessageSent("@assistant what is A2?", "ann", "ann");

		this.run.run(NewEvent.of("message.sent", question));

		assertThat(this.run.appended()).hasSize(AssistantConsumer.tokens(question).size())
			.allSatisfy((Event delta) -> assertThat(delta.type()).isEqualTo("reply.delta"));
		assertThat(this.run.returned()).containsExactly(NewEvent.of("reply.completed", new ReplyCompleted("ann", 1)));
	}

	@Test
	void aReplyRunAgainAfterACrashWritesNoTokenTwice() throws Exception {
		this.run.run(NewEvent.of("message.sent", new MessageSent("@assistant again", "bob", "bob")));
		int tokens = this.run.appended().size();

		this.run.rerun();

		assertThat(this.run.appended()).isEmpty();
		assertThat(this.run.session().history(0, 1000).events()).hasSize(1 + tokens);
	}

	@Test
	void aMessageWithoutAMentionIsLeftAlone() throws Exception {
		assertThat(this.run.run(NewEvent.of("message.sent", new MessageSent("hello all", "cy", "cy")))).isNull();
		assertThat(this.run.appended()).isEmpty();
	}

	@Test
	void anAbortedReplyWritesNothingMore() {
		this.run.signal().abort(new A2Exception(ErrorCode.ABORTED, "stop.requested arrived"));

		assertThatThrownBy(() -> this.run.run(NewEvent.of("message.sent", new MessageSent("@assistant hi", "di", "di"))))
			.isInstanceOf(A2Exception.class);
		assertThat(this.run.session().history(0, 1000).events()).extracting(Event::type).containsExactly("message.sent");
	}

}
