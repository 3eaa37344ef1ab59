package dev.a2.ai;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.ErrorCode;
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
 * took the run over is not part of the stored reply, though it had written nothing when the other began:
 * what it goes on to write is refused (its lease lapsed without a renewal), and had it landed, the fold
 * of the reply would leave it out all the same (attempt 2 restarted it).
 */
class ReplyTakeoverIntegrationTests {

	private final AiTestSupport support = new AiTestSupport("takeover");

	@AfterEach
	void close() {
		this.support.close();
	}

	/** The assistant, telling what attempt 1's writes were answered when they were refused. */
	private static Consumer assistant(ScriptedModel model, ReplyStream replies, boolean continuePartial,
			AtomicReference<A2Exception> refused) {
		return Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
			try {
				replies.stream(context, (partial) -> model.stream(new Prompt(ReplyStream.conversation(context))), continuePartial);
			}
			catch (A2Exception ex) {
				if (context.attempt() == 1) {
					refused.set(ex);
				}
				throw ex;
			}
			return null;
		});
	}

	/**
	 * Attempt 1 is slow to its first token and its instance stalls past the lease; attempt 2 takes over
	 * on another instance and finds no text of attempt 1. The stalled attempt then wakes and tries to
	 * write its text before attempt 2's first token: refused, it gives its model's stream up. (Its text
	 * and its end were stored, among attempt 2's events, before runs' appends were fenced by the lease.)
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
		AtomicReference<A2Exception> zombieWrote = new AtomicReference<>();
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
				// attempt 2: the stalled attempt wakes now, and gives up before this one's first token
				Script.answer(Duration.ZERO, "fresh ", "answer.").beforeToken((i) -> {
					if (i == 0) {
						zombieGo.countDown();
						await().atMost(Duration.ofSeconds(20)).until(() -> zombieWrote.get() != null);
					}
				}));
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS.withFlush(Duration.ofMillis(20), 64));
		A2Server stalled = this.support.server(assistant(model, replies, continuePartial, zombieWrote));
		Session session = stalled.session("chat", "stalled");
		watched[0] = session;
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("hi"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> model.calls() == 1);

		// the stalled instance's lease lapses (no heartbeat ran); another instance takes the run over
		A2Server survivor = this.support.server(assistant(model, replies, continuePartial, zombieWrote));
		this.support.leasesLapse();
		survivor.sweep();
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.REPLY_COMPLETED).size() == 1);
		assertThat(zombieWrote.get()).as("what the stalled attempt's write was answered").isNotNull();
		assertThat(zombieWrote.get().code()).isEqualTo(ErrorCode.SUPERSEDED_ATTEMPT);
		assertThat(events(session)).as("the stalled attempt stored nothing")
			.noneMatch((event) -> event.cause() != null && event.cause().attempt() == 1);

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
