package dev.a2.sample;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import dev.a2.A2Exception;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.ai.AiEvents;
import dev.a2.ai.AiEvents.ReplyDelta;
import dev.a2.ai.ReplySettings;
import dev.a2.ai.ReplyStream;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.testkit.ConsumerRun;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The assistant's code in plain unit tests (the test kit's ConsumerRun): no database, no Spring, the
 * sample's offline model answering at once.
 */
class AssistantConsumerTests {

	private final Consumer assistant = new AssistantConsumer().assistant(new OfflineChatModel(Duration.ZERO),
			new ReplyStream(ReplySettings.DEFAULTS));

	private final ConsumerRun run = ConsumerRun.of(new TourContract().chat(), this.assistant);

	@Test
	void aMentionIsAnsweredWithTheModelsWholeTextAndCompleted() throws Exception {
		MessageSent question = new MessageSent("@assistant what is A2?", "ann", "ann");

		this.run.run(NewEvent.of("message.sent", question));

		assertThat(text(this.run.appended())).isEqualTo(String.join("", AssistantConsumer.tokens(question)));
		assertThat(this.run.appended()).extracting(Event::type).last().isEqualTo(AiEvents.REPLY_COMPLETED);
	}

	/** docs/testing.md's unit test, as the page shows it (DocumentationSnippetsTests keeps the two equal). */
	@Test
	void theTestingPagesUnitTestOfTheAssistantPasses() throws Exception {
		Contract chatContract = new TourContract().chat();
		Consumer assistant = this.assistant;
		// tag::testing-page[]
		ConsumerRun run = ConsumerRun.of(chatContract, assistant);
		run.run(NewEvent.of("message.sent", new MessageSent("@assistant hi", "ann", "ann")));
		assertThat(run.appended()).extracting(Event::type).containsOnly("reply.delta", "reply.completed");
		assertThat(run.returned()).isEmpty();          // ReplyStream appends the reply's end itself
		run.rerun();                                   // as after a crash: the reply ended, nothing new
		assertThat(run.appended()).isEmpty();
		// end::testing-page[]
	}

	@Test
	void aReplyRunAgainAfterItCompletedWritesNothingTwice() throws Exception {
		this.run.run(NewEvent.of("message.sent", new MessageSent("@assistant again", "bob", "bob")));
		int stored = this.run.session().history(0, 1000).events().size();

		this.run.rerun();

		assertThat(this.run.appended()).isEmpty();
		assertThat(this.run.session().history(0, 1000).events()).hasSize(stored);
	}

	@Test
	void aMessageWithoutAMentionIsLeftAlone() throws Exception {
		assertThat(this.run.run(NewEvent.of("message.sent", new MessageSent("hello all", "cy", "cy")))).isNull();
		assertThat(this.run.appended()).isEmpty();
	}

	@Test
	void anAbortedReplyNeverCompletes() throws Exception {
		this.run.signal().abort(new A2Exception(ErrorCode.ABORTED, "stop.requested arrived"));

		try {
			this.run.run(NewEvent.of("message.sent", new MessageSent("@assistant hi", "di", "di")));
		}
		catch (A2Exception ex) {
			// an aborted run may end by throwing its abort: either way nothing more is written
		}
		assertThat(this.run.session().history(0, 1000).events()).extracting(Event::type)
			.doesNotContain(AiEvents.REPLY_COMPLETED, AiEvents.REPLY_DELTA);
	}

	private static String text(List<Event> events) {
		return events.stream()
			.filter((event) -> event.type().equals(AiEvents.REPLY_DELTA))
			.map((event) -> event.payload(ReplyDelta.class).text())
			.collect(Collectors.joining());
	}

}
