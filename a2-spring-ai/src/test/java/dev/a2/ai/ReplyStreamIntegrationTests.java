package dev.a2.ai;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.LogCapture;
import dev.a2.NewEvent;
import dev.a2.PresenceValue;
import dev.a2.Session;
import dev.a2.ai.AiEvents.ReplyCompleted;
import dev.a2.ai.AiEvents.ReplyDelta;
import dev.a2.ai.AiEvents.ReplyRestarted;
import dev.a2.ai.AiEvents.ReplyStopped;
import dev.a2.ai.AiTestSupport.MessageSent;
import dev.a2.ai.AiTestSupport.StopRequested;
import dev.a2.ai.ScriptedModel.Script;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.Prompt;
import reactor.core.publisher.Flux;

import static dev.a2.ai.AiTestSupport.events;
import static dev.a2.ai.AiTestSupport.ofType;
import static dev.a2.ai.AiTestSupport.storedReply;
import static dev.a2.ai.AiTestSupport.types;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A model's reply streamed into a session, as a reader of the session sees it, through crashes,
 * stops and slow models, on real PostgreSQL.
 */
class ReplyStreamIntegrationTests {

	private static final Duration TOKEN = Duration.ofMillis(20);

	private final AiTestSupport support = new AiTestSupport("replies");

	@AfterEach
	void close() {
		this.support.close();
	}

	private static Consumer assistant(ScriptedModel model, ReplySettings settings) {
		ReplyStream replies = new ReplyStream(settings);
		return Consumer.builder("chat", "assistant")
			.types("message.sent")
			.abortOn("stop.requested")
			.run((context) -> {
				replies.stream(context, model.stream(new Prompt(ReplyStream.conversation(context))));
				return null;
			});
	}

	private static ReplySettings fastFlush() {
		return ReplySettings.DEFAULTS.withFlush(Duration.ofMillis(20), 64);
	}

	@Test
	void aReplyTakenOverByAnotherInstanceIsExactlyTheSecondAttemptsAnswer() {
		String first = "The first attempt says something long that will never be finished because its instance dies";
		String second = "The second attempt answers differently, and completely.";
		ScriptedModel model = new ScriptedModel(Script.hanging(5, TOKEN, ScriptedModel.words(first)),
				Script.answer(TOKEN, ScriptedModel.words(second)));
		A2Server dying = this.support.server(assistant(model, fastFlush()));
		Session session = dying.session("chat", "takeover");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("tell me"))).get(0).index();
		String firstFive = String.join("", List.of(ScriptedModel.words(first)).subList(0, 5));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(storedReply(session, replyTo)).isEqualTo(firstFive));
		AiTestSupport.halt(dying);

		A2Server survivor = this.support.server(assistant(model, fastFlush()));
		this.support.leasesLapse();
		survivor.sweep();
		Session seen = survivor.session("chat", "takeover");
		await().atMost(Duration.ofSeconds(20)).until(() -> types(seen).contains(AiEvents.REPLY_COMPLETED));

		assertThat(storedReply(seen, replyTo)).isEqualTo(second);
		List<Event> events = events(seen);
		int restartedAt = types(seen).indexOf(AiEvents.REPLY_RESTARTED);
		assertThat(restartedAt).as("the restart comes after the first attempt's text").isGreaterThan(1);
		assertThat(events.get(restartedAt).payload(ReplyRestarted.class)).isEqualTo(new ReplyRestarted(replyTo, 2, 1, ""));
		assertThat(events.subList(1, restartedAt)).allSatisfy((event) -> {
			assertThat(event.type()).isEqualTo(AiEvents.REPLY_DELTA);
			assertThat(event.payload(ReplyDelta.class).attempt()).isEqualTo(1);
		});
		String afterRestart = events.subList(restartedAt + 1, events.size())
			.stream()
			.filter((event) -> event.type().equals(AiEvents.REPLY_DELTA))
			.map((event) -> event.payload(ReplyDelta.class))
			.peek((delta) -> assertThat(delta.attempt()).isEqualTo(2))
			.map(ReplyDelta::text)
			.collect(Collectors.joining());
		assertThat(afterRestart).as("what a client shows after dropping the partial text").isEqualTo(second);
		ReplyCompleted completed = ofType(seen, AiEvents.REPLY_COMPLETED).get(0).payload(ReplyCompleted.class);
		assertThat(completed.attempt()).isEqualTo(2);
		assertThat(completed.finishReason()).isEqualTo("STOP");
		assertThat(completed.usage().completionTokens()).isEqualTo(ScriptedModel.words(second).length);
		assertThat(events.get(events.size() - 1).type()).isEqualTo(AiEvents.REPLY_COMPLETED);
		assertThat(model.prompts.get(1).getInstructions()).as("the second attempt is sent the same conversation")
			.hasSize(1)
			.first()
			.satisfies((message) -> assertThat(message.getText()).isEqualTo("tell me"));
	}

	@Test
	void anAttemptAfterOneThatCompletedTheReplyDoesNotAskTheModelAgain() {
		CountDownLatch completed = new CountDownLatch(1);
		ScriptedModel model = new ScriptedModel(Script.answer(Duration.ZERO, "done ", "once."));
		ReplyStream replies = new ReplyStream(fastFlush());
		AtomicInteger runs = new AtomicInteger();
		Consumer crashingAfterTheReply = Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
			replies.stream(context, model.stream(new Prompt(ReplyStream.conversation(context))));
			if (runs.incrementAndGet() == 1) {
				// the instance dies after the reply was written, before its unit of work was finished
				completed.countDown();
				new CountDownLatch(1).await(60, TimeUnit.SECONDS);
			}
			return null;
		});
		A2Server dying = this.support.server(crashingAfterTheReply);
		Session session = dying.session("chat", "completed-once");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("hi"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> completed.getCount() == 0);
		AiTestSupport.halt(dying);

		A2Server survivor = this.support.server(crashingAfterTheReply);
		this.support.leasesLapse();
		survivor.sweep();
		await().atMost(Duration.ofSeconds(20)).until(() -> runs.get() == 2 && survivor.pendingWork().isEmpty());
		assertThat(model.calls()).isEqualTo(1);
		assertThat(types(session)).containsExactly("message.sent", AiEvents.REPLY_DELTA, AiEvents.REPLY_DELTA,
				AiEvents.REPLY_COMPLETED);
		assertThat(storedReply(session, replyTo)).isEqualTo("done once.");
	}

	@Test
	void aNewAttemptCanContinueFromTheStoredPartialText() {
		ScriptedModel model = new ScriptedModel(Script.hanging(3, TOKEN, "one ", "two ", "three ", "lost "),
				Script.answer(TOKEN, "four ", "five."));
		ReplyStream replies = new ReplyStream(fastFlush());
		List<String> partials = new CopyOnWriteArrayList<>();
		Consumer continuing = Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
			replies.stream(context, (partial) -> {
				partials.add(partial);
				return model.stream(new Prompt(ReplyStream.conversation(context)));
			}, true);
			return null;
		});
		A2Server dying = this.support.server(continuing);
		Session session = dying.session("chat", "continued");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("count"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(storedReply(session, replyTo)).isEqualTo("one two three "));
		AiTestSupport.halt(dying);

		A2Server survivor = this.support.server(continuing);
		this.support.leasesLapse();
		survivor.sweep();
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));
		assertThat(partials).containsExactly("", "one two three ");
		assertThat(storedReply(session, replyTo)).isEqualTo("one two three four five.");
		assertThat(ofType(session, AiEvents.REPLY_RESTARTED)).extracting(Event::payload)
			.as("the second attempt claims the reply from the text it continues")
			.containsExactly(new ReplyRestarted(replyTo, 2, 1, "one two three "));
	}

	@Test
	void aStalledAttemptThatWakesAfterTheTakeoverChangesNothingAReaderSees() {
		Session session = this.support.server().session("chat", "zombie");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("hi"))).get(0).index();
		// the log as a woken zombie leaves it: attempt 2 restarted and completed, then attempt 1 goes on
		session.append(List.of(NewEvent.of(AiEvents.REPLY_DELTA, new ReplyDelta(replyTo, 0, 1, "old ")),
				NewEvent.of(AiEvents.REPLY_RESTARTED, new ReplyRestarted(replyTo, 2, 1, "")),
				NewEvent.of(AiEvents.REPLY_DELTA, new ReplyDelta(replyTo, 0, 2, "new answer")),
				NewEvent.of(AiEvents.REPLY_COMPLETED, new ReplyCompleted(replyTo, 0, 2, "STOP", null)),
				NewEvent.of(AiEvents.REPLY_DELTA, new ReplyDelta(replyTo, 0, 1, "zombie text")),
				NewEvent.of(AiEvents.REPLY_STOPPED, new ReplyStopped(replyTo, 0, 1, "zombie", null))));
		Conversation.Turn turn = ((Conversation) session.state(AiEvents.CONVERSATION).state()).reply(replyTo);
		assertThat(turn.text()).isEqualTo("new answer");
		assertThat(turn.end()).isEqualTo(AiEvents.REPLY_COMPLETED);
	}

	@Test
	void aStopFromAnotherInstanceCancelsTheModelsStreamAndStoresReplyStopped() throws Exception {
		ScriptedModel model = new ScriptedModel(Script.hanging(3, TOKEN, ScriptedModel.words("one two three four five six")));
		A2Server running = this.support.server(assistant(model, fastFlush()));
		A2Server other = this.support.server();
		Session session = running.session("chat", "stop");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("go on"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(storedReply(session, replyTo)).as(events(session).toString()).isEqualTo("one two three "));

		other.session("chat", "stop").append(NewEvent.of("stop.requested", new StopRequested("ann")));

		assertThat(model.cancelled.await(20, TimeUnit.SECONDS)).as("the model's stream was cancelled").isTrue();
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));
		ReplyStopped stopped = ofType(session, AiEvents.REPLY_STOPPED).get(0).payload(ReplyStopped.class);
		assertThat(stopped.attempt()).isEqualTo(1);
		assertThat(stopped.reason()).contains("stop.requested");
		assertThat(storedReply(session, replyTo)).isEqualTo("one two three ");
		assertThat(types(session)).doesNotContain(AiEvents.REPLY_COMPLETED, AiEvents.REPLY_FAILED);
		assertThat(model.cancellations.get()).isEqualTo(1);
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
				session.presence().participants().get("assistant").get(AiEvents.PRESENCE_FIELD).value()).isEqualTo("idle"));
	}

	/**
	 * The instance streaming a reply dies; the user presses Stop before another instance takes the run
	 * over. The takeover's attempt never starts (its abort event is in the log before it), so nothing
	 * writes the reply's end: readers see the first attempt's text streaming for ever.
	 */
	@Test
	void aStopPressedWhileTheReplyingInstanceIsDownEndsTheReplyStoppedWithTheTextShown() {
		ScriptedModel model = new ScriptedModel(Script.hanging(2, TOKEN, ScriptedModel.words("one two three four")),
				Script.answer(TOKEN, ScriptedModel.words("one two three four")));
		A2Server dying = this.support.server(assistant(model, fastFlush()));
		Session session = dying.session("chat", "stop-while-down");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("go on"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> storedReply(session, replyTo).equals("one two "));
		AiTestSupport.halt(dying);

		A2Server survivor = this.support.server(assistant(model, fastFlush()));
		Session seen = survivor.session("chat", "stop-while-down");
		seen.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		this.support.leasesLapse();
		survivor.sweep();

		await().atMost(Duration.ofSeconds(20))
			.alias("the reply has an end event; log: " + types(seen))
			.until(() -> ((Conversation) seen.state(AiEvents.CONVERSATION).state()).reply(replyTo).end() != null);
		// ended as a Stop pressed while it streamed: the text the user saw, stopped, the model not asked again
		Conversation.Turn reply = ((Conversation) seen.state(AiEvents.CONVERSATION).state()).reply(replyTo);
		assertThat(reply.end()).isEqualTo(AiEvents.REPLY_STOPPED);
		assertThat(reply.text()).isEqualTo("one two ");
		assertThat(model.calls()).isOne();
		assertThat(seen.presence().participants().get("assistant").get(AiEvents.PRESENCE_FIELD).value()).isEqualTo("idle");
	}

	@Test
	void aModelThatThinksLongerThanThePresenceTtlStillShowsThinking() {
		ScriptedModel model = new ScriptedModel(Script.hanging(0, TOKEN, "never"));
		assertActivityOutlastsThePresenceTtl(model, "thinking");
	}

	@Test
	void aReplyThatStreamsLongerThanThePresenceTtlStillShowsStreaming() {
		String[] tokens = IntStream.range(0, 5000).mapToObj((i) -> "t" + i + " ").toArray(String[]::new);
		ScriptedModel model = new ScriptedModel(Script.answer(TOKEN, tokens));
		assertActivityOutlastsThePresenceTtl(model, "streaming");
	}

	/**
	 * The run shows {@code activity}; the clock passes the presence TTL of its first write while the
	 * model still thinks or streams, and readers still see it, as the run wrote it again meanwhile.
	 */
	private void assertActivityOutlastsThePresenceTtl(ScriptedModel model, String activity) {
		// the run writes its activity again every third of the TTL, of real time: a few seconds here
		Duration ttl = Duration.ofSeconds(6);
		A2Server server = this.support.server(ttl, assistant(model, fastFlush()));
		Session session = server.session("chat", "long-" + activity);
		session.append(NewEvent.of("message.sent", new MessageSent("take your time")));
		Instant shown = await().atMost(Duration.ofSeconds(20)).until(() -> activityAt(session, activity), Objects::nonNull);

		this.support.clock.advance(ttl.minusSeconds(2));
		await().atMost(Duration.ofSeconds(30))
			.alias("the run writes '" + activity + "' again before the presence TTL lapses")
			.until(() -> activityAt(session, activity), (at) -> at != null && at.isAfter(shown));
		this.support.clock.advance(Duration.ofSeconds(4));

		assertThat(activityAt(session, activity)).as("'" + activity + "' shown past the first write's TTL, while the run goes on")
			.isNotNull();
		assertThat(types(session)).doesNotContain(AiEvents.REPLY_COMPLETED);
		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));
	}

	/** When the assistant's {@code ai.status} was written, if it shows {@code activity} now. */
	private static @Nullable Instant activityAt(Session session, String activity) {
		Map<String, PresenceValue> fields = session.presence().participants().get("assistant");
		PresenceValue status = (fields != null) ? fields.get(AiEvents.PRESENCE_FIELD) : null;
		return (status != null && activity.equals(status.value())) ? status.at() : null;
	}

	@Test
	void fiveHundredTokensAreStoredInAFewDeltasWhileTheFirstTokenGoesOutAtOnce() {
		String[] tokens = IntStream.range(0, 500).mapToObj((i) -> "t" + i + " ").toArray(String[]::new);
		AtomicBoolean firstStoredBeforeSecond = new AtomicBoolean();
		A2Server[] server = new A2Server[1];
		// before emitting its second token the model waits for the first one to be in the log; with
		// a flush every 10 chunks (and an interval of an hour) only the first-token rule can put it there
		ScriptedModel model = new ScriptedModel(Script.answer(TOKEN, tokens).beforeToken((i) -> {
			if (i == 1) {
				firstStoredBeforeSecond.set(await().atMost(Duration.ofSeconds(20))
					.until(() -> !ofType(server[0].session("chat", "long"), AiEvents.REPLY_DELTA).isEmpty(), (found) -> found));
			}
		}));
		server[0] = this.support.server(assistant(model, ReplySettings.DEFAULTS.withFlush(Duration.ofHours(1), 10)));
		Session session = server[0].session("chat", "long");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("a long one"))).get(0).index();
		await().atMost(Duration.ofSeconds(60)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

		assertThat(firstStoredBeforeSecond).isTrue();
		List<ReplyDelta> deltas = ofType(session, AiEvents.REPLY_DELTA).stream().map((e) -> e.payload(ReplyDelta.class)).toList();
		assertThat(deltas.get(0).text()).as("the first delta holds exactly the first token").isEqualTo("t0 ");
		assertThat(deltas).hasSizeLessThanOrEqualTo(60);
		assertThat(deltas.stream().map(ReplyDelta::text).collect(Collectors.joining())).isEqualTo(String.join("", tokens));
		assertThat(storedReply(session, replyTo)).isEqualTo(String.join("", tokens));
	}

	@Test
	void tokensThatStopComingAreFlushedAfterTheInterval() {
		// the model emits three tokens, then waits until they are all in the log before going on:
		// only the interval can flush the second and third, as no further token comes to push them out
		A2Server[] server = new A2Server[1];
		ScriptedModel model = new ScriptedModel(Script.answer(Duration.ZERO, "a ", "b ", "c ", "d").beforeToken((i) -> {
			if (i == 3) {
				await().atMost(Duration.ofSeconds(20)).until(() -> storedReply(server[0].session("chat", "quiet"), 1).equals("a b c "));
			}
		}));
		server[0] = this.support.server(assistant(model, ReplySettings.DEFAULTS.withFlush(Duration.ofMillis(50), 1000)));
		Session session = server[0].session("chat", "quiet");
		session.append(NewEvent.of("message.sent", new MessageSent("quiet")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));
		assertThat(ofType(session, AiEvents.REPLY_DELTA).stream().map((e) -> e.payload(ReplyDelta.class).text()))
			.containsExactly("a ", "b c ", "d");
	}

	@Test
	void anEmojiTheModelSplitsOverTwoChunksIsStoredWhole() {
		// a delta per chunk: without holding the high surrogate back, the delta with half an emoji fails the reply
		ScriptedModel model = new ScriptedModel(Script.answer(Duration.ZERO, "Smile ", "\uD83D", "\uDE00", "!"));
		A2Server server = this.support.server(assistant(model, ReplySettings.DEFAULTS.withFlush(Duration.ofMillis(20), 1)));
		Session session = server.session("chat", "split-emoji");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("smile"))).get(0).index();
		awaitCompleted(session);
		assertThat(storedReply(session, replyTo)).isEqualTo("Smile \uD83D\uDE00!");
		assertThat(model.calls()).isEqualTo(1);
	}

	@Test
	void textASessionCannotStoreIsStoredAsTheReplacementCharacterNotAFailedReply() {
		ScriptedModel model = new ScriptedModel(Script.answer(Duration.ZERO, "Bye", "\u0000", " \uDE00 ", "\uD83D"));
		A2Server server = this.support.server(assistant(model, fastFlush()));
		Session session = server.session("chat", "unstorable");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("bye"))).get(0).index();
		awaitCompleted(session);
		assertThat(storedReply(session, replyTo)).isEqualTo("Bye\uFFFD \uFFFD \uFFFD");
	}

	/** Waits for the reply to end, and that it completed: a failed reply ends the wait at once. */
	private static void awaitCompleted(Session session) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> types(session).contains(AiEvents.REPLY_COMPLETED) || types(session).contains(AiEvents.REPLY_FAILED));
		assertThat(types(session)).doesNotContain(AiEvents.REPLY_FAILED).contains(AiEvents.REPLY_COMPLETED);
	}

	@Test
	void aModelThatCannotStreamFailsTheReplyOnceAndIsNotAskedAgain() {
		AtomicInteger asked = new AtomicInteger();
		// a ChatModel written with call() alone: ChatModel's own stream() throws
		ChatModel callOnly = new ChatModel() {

			@Override
			public ChatResponse call(Prompt prompt) {
				throw new AssertionError("not called by a streamed reply");
			}

			@Override
			public Flux<ChatResponse> stream(Prompt prompt) {
				asked.incrementAndGet();
				throw new UnsupportedOperationException("streaming is not supported");
			}

		};
		ReplyStream replies = new ReplyStream(fastFlush());
		Assistant assistant = Assistant.builder(callOnly).build();
		A2Server server = this.support.server(Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
			replies.converse(context, assistant);
			return null;
		}));
		Session session = server.session("chat", "call-only");
		session.append(NewEvent.of("message.sent", new MessageSent("hi")));

		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_FAILED));
		await().atMost(Duration.ofSeconds(20)).until(() -> server.pendingWork().isEmpty());
		assertThat(ofType(session, AiEvents.REPLY_FAILED).get(0).payload(AiEvents.ReplyFailed.class).error())
			.contains("streaming is not supported");
		assertThat(types(session)).containsExactly("message.sent", AiEvents.REPLY_FAILED);
		assertThat(asked).as("the model was asked once: a failed reply is not run again").hasValue(1);
		assertThat(server.deadLetters("chat", "call-only", null, 10)).isEmpty();
	}

	@Test
	void aModelThatFailsEndsTheReplyWithReplyFailed() {
		ScriptedModel model = new ScriptedModel(Script.failing(new IllegalStateException("provider said 500"), "partial "));
		A2Server server = this.support.server(assistant(model, fastFlush()));
		Session session = server.session("chat", "failing");
		session.append(NewEvent.of("message.sent", new MessageSent("fail")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_FAILED));
		assertThat(ofType(session, AiEvents.REPLY_FAILED).get(0).payload(AiEvents.ReplyFailed.class).error())
			.contains("provider said 500");
		assertThat(types(session)).containsExactly("message.sent", AiEvents.REPLY_DELTA, AiEvents.REPLY_FAILED);
	}

	@Test
	void aProvidersTimeoutEndsTheReplyWithReplyFailedSayingItTimedOut() throws Exception {
		// OpenAI's client fails a stream that outlasts its timeout with "Stream failed", the timeout in its cause
		try (OpenAiStandIn openAi = OpenAiStandIn.pausing("Once upon")) {
			Assistant assistant = Assistant.builder(openAi.model(Duration.ofSeconds(1))).build();
			ReplyStream replies = new ReplyStream(fastFlush());
			A2Server server = this.support.server(Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
				replies.converse(context, assistant);
				return null;
			}));
			Session session = server.session("chat", "provider-timeout");
			long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("a long story"))).get(0).index();
			await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_FAILED));

			assertThat(ofType(session, AiEvents.REPLY_FAILED).get(0).payload(AiEvents.ReplyFailed.class).error())
				.startsWith("OpenAIIoException: Stream failed (InterruptedIOException: timeout");
			assertThat(storedReply(session, replyTo)).isEqualTo("Once upon");
		}
	}

	@Test
	void aProvidersRefusalEndsTheReplyWithReplyFailedNamingItWithoutTheFuturesWrapper() throws Exception {
		try (OpenAiStandIn openAi = OpenAiStandIn.refusing(429, "Rate limit reached for requests")) {
			Assistant assistant = Assistant.builder(openAi.model()).build();
			ReplyStream replies = new ReplyStream(fastFlush());
			A2Server server = this.support.server(Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
				replies.converse(context, assistant);
				return null;
			}));
			Session session = server.session("chat", "provider-429");
			try (LogCapture log = new LogCapture()) {
				long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("hi"))).get(0).index();
				await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_FAILED));
				// an operator sees the provider's failure in the log, on one line, without reading sessions
				assertThat(log.lines("The reply to event " + replyTo + " of session 'provider-429' (attempt 1) failed: "
						+ "RateLimitException: 429: Rate limit reached for requests")).hasSize(1);
			}

			assertThat(ofType(session, AiEvents.REPLY_FAILED).get(0).payload(AiEvents.ReplyFailed.class).error())
				.isEqualTo("RateLimitException: 429: Rate limit reached for requests");
			assertThat(openAi.requests).hasSize(1);
		}
	}

}
