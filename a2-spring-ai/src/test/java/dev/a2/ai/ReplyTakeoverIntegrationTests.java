package dev.a2.ai;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiTestSupport.MessageSent;
import dev.a2.ai.ScriptedModel.Script;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.prompt.Prompt;

import static dev.a2.ai.AiTestSupport.events;
import static dev.a2.ai.AiTestSupport.ofType;
import static dev.a2.ai.AiTestSupport.storedReply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A stalled attempt (its instance alive but paused past its lease) that wakes after another instance
 * took the run over is not part of the stored reply, though it had written nothing when the other began.
 */
class ReplyTakeoverIntegrationTests {

	private final AiTestSupport support = new AiTestSupport("takeover");

	@AfterEach
	void close() {
		this.support.close();
	}

	private static Consumer assistant(ScriptedModel model, ReplyStream replies, boolean continuePartial) {
		return Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
			replies.stream(context, (partial) -> model.stream(new Prompt(ReplyStream.conversation(context))), continuePartial);
			return null;
		});
	}

	/**
	 * Attempt 1 is slow to its first token and its instance stalls past the lease; attempt 2 takes over
	 * on another instance and finds no text of attempt 1. The stalled attempt then wakes and writes its
	 * text and its end before attempt 2's first token.
	 */
	@Test
	void aStalledFirstAttemptThatWakesBeforeTheNewAttemptsFirstTokenIsNotPartOfTheReply() throws Exception {
		runTakeover(false);
	}

	/** The same where a new attempt continues the stored partial text: it found none, and none is kept. */
	@Test
	void inContinuationModeTheTextAStalledAttemptWritesAfterTheNewOneReadThePartialIsNotKept() throws Exception {
		runTakeover(true);
	}

	private void runTakeover(boolean continuePartial) throws Exception {
		CountDownLatch zombieGo = new CountDownLatch(1);
		Session[] watched = new Session[1];
		ScriptedModel model = new ScriptedModel(
				// attempt 1: waits (stalled) until attempt 2 has begun streaming
				Script.answer(Duration.ZERO, "zombie ", "text ").beforeToken((i) -> {
					if (i == 0) {
						try {
							zombieGo.await(30, TimeUnit.SECONDS);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
					}
				}),
				// attempt 2: the stalled attempt wakes now and ends before this one's first token
				Script.answer(Duration.ZERO, "fresh ", "answer.").beforeToken((i) -> {
					if (i == 0) {
						zombieGo.countDown();
						await().atMost(Duration.ofSeconds(20))
							.until(() -> ofType(watched[0], AiEvents.REPLY_COMPLETED).size() == 1);
					}
				}));
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS.withFlush(Duration.ofMillis(20), 64));
		A2Server stalled = this.support.server(assistant(model, replies, continuePartial));
		Session session = stalled.session("chat", "stalled");
		watched[0] = session;
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("hi"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> model.calls() == 1);

		// the stalled instance's lease lapses (no heartbeat ran); another instance takes the run over
		A2Server survivor = this.support.server(assistant(model, replies, continuePartial));
		this.support.leasesLapse();
		survivor.sweep();
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.REPLY_COMPLETED).size() == 2);

		String log = events(session).stream()
			.map((event) -> event.type() + "(" + event.payload() + ")")
			.toList()
			.subList(1, events(session).size())
			.toString();
		assertThat(model.calls()).as("two attempts asked the model").isEqualTo(2);
		Conversation.Turn turn = ((Conversation) session.state(AiEvents.CONVERSATION).state()).reply(replyTo);
		assertThat(turn.attempt()).isEqualTo(2);
		assertThat(ofType(session, AiEvents.REPLY_RESTARTED)).as("attempt 2 claimed the reply; log: " + log)
			.extracting(Event::payload)
			.containsExactly(new AiEvents.ReplyRestarted(replyTo, 2, 1, ""));
		assertThat(storedReply(session, replyTo)).as("the stored reply is exactly attempt 2's text; log: " + log)
			.isEqualTo("fresh answer.");
	}

}
