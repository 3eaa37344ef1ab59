package dev.a2;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.TestContracts.MessageSent;
import dev.a2.TestContracts.Note;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static dev.a2.TestContracts.message;
import static dev.a2.TestContracts.note;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The abort rule: a run whose abort event is in the log before it is claimed does not start and is
 * recorded as aborted; a running attempt is aborted only by an abort event appended after it
 * started — never at a later lease renewal for one that was there before. What an aborted run
 * returns commits with its end, once; every abort is logged and observed.
 */
class AbortIntegrationTests {

	/** A short lease: the heartbeat, which once cut queued answers, comes every second. */
	private static final DrainSettings SHORT_LEASE = DrainSettings.DEFAULTS.withLease(Duration.ofSeconds(3));

	private final DrainTestSupport support = new DrainTestSupport("aborts");

	@AfterEach
	void halt() {
		this.support.close();
	}

	@Test
	void stopEndsTheStreamingAnswerAndTheQueuedQuestionIsRecordedAbortedWithoutStarting() throws Exception {
		List<String> started = new CopyOnWriteArrayList<>();
		CountDownLatch firstStarted = new CountDownLatch(1);
		AtomicReference<A2Exception> reason = new AtomicReference<>();
		Consumer assistant = Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed(Lane.KeyInput::session))
			.abortOn("note", (trigger, arrived) -> arrived.payload(Note.class).text().equals("stop"))
			.run((context) -> {
				String question = context.event().payload(MessageSent.class).text();
				started.add(question);
				firstStarted.countDown();
				TestContracts.blockUntilAborted();
				if (context.signal().isAborted()) {
					reason.compareAndSet(null, context.signal().reason());
					return note("stopped " + question);
				}
				return note("answer to " + question);
			});
		try (LogCapture log = new LogCapture()) {
			A2Server server = this.support.server(SHORT_LEASE, assistant);
			Session session = server.session("chat", A2TestSupport.newSessionId());
			List<Event> questions = session.append(message("q1"), message("q2"));
			assertThat(firstStarted.await(20, TimeUnit.SECONDS)).isTrue();

			session.append(note("stop"));
			await().atMost(Duration.ofSeconds(20))
				.until(() -> this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ?", session.id()) == 0);
			// renewals after the stop find nothing to cut: the queued question never started
			server.drainer().heartbeat();
			server.drainer().heartbeat();
			server.sweep();

			assertThat(started).containsExactly("q1");
			assertThat(reason.get().code()).isEqualTo(ErrorCode.ABORTED);
			List<Event> notes = notes(session);
			assertThat(notes).extracting((e) -> e.payload(Note.class).text()).containsExactly("stop", "stopped q1");
			assertThat(notes.get(1).id()).isEqualTo(DerivedIds.returnedEvent(questions.get(0).id(), 0, "assistant"));
			assertThat(notes.get(1).cause()).isEqualTo(new Cause("assistant", session.id(), 1, 1));

			assertThat(log.lines("Consumer 'assistant' aborted its run of event 1 of session '" + session.id() + "'"))
				.singleElement()
				.asString()
				.contains("INFO", "(attempt 1): event 3 of type 'note' arrived");
			assertThat(log.lines("Consumer 'assistant' did not start its run of event 2 of session '" + session.id() + "'"))
				.singleElement()
				.asString()
				.contains("INFO", "event 3 of type 'note' aborts it", "recorded as aborted");
			for (String index : List.of("1", "2")) {
				TestObservationRegistryAssert.assertThat(this.support.observations)
					.hasAnObservation((observation) -> observation.hasNameEqualTo(A2Observations.EVENT)
						.hasLowCardinalityKeyValue(A2Observations.CONSUMER, "assistant")
						.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "aborted")
						.hasHighCardinalityKeyValue(A2Observations.SESSION, session.id())
						.hasHighCardinalityKeyValue(A2Observations.EVENT_INDEX, index)
						.hasHighCardinalityKeyValue(A2Observations.ABORTED_BY, "note")
						.hasHighCardinalityKeyValue(A2Observations.ABORTED_BY_INDEX, "3"));
			}
		}
	}

	@Test
	void aStopAimedAtTheStreamingAnswerLetsTheQueuedOneRunToItsEndThroughRenewals() throws Exception {
		CountDownLatch firstStarted = new CountDownLatch(1);
		CountDownLatch secondStarted = new CountDownLatch(1);
		CountDownLatch releaseSecond = new CountDownLatch(1);
		AtomicReference<A2Exception> secondReason = new AtomicReference<>();
		Consumer assistant = Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed(Lane.KeyInput::session))
			.abortOn("note", (trigger, arrived) -> arrived.payload(Note.class).text().equals("stop " + trigger.id()))
			.run((context) -> {
				String question = context.event().payload(MessageSent.class).text();
				if (question.equals("q1")) {
					firstStarted.countDown();
					TestContracts.blockUntilAborted();
					return note("stopped q1");
				}
				secondStarted.countDown();
				try {
					releaseSecond.await(60, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					secondReason.set(context.signal().reason());
				}
				return note("answer to q2");
			});
		A2Server server = this.support.server(SHORT_LEASE, assistant);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		List<Event> questions = session.append(message("q1"), message("q2"));
		assertThat(firstStarted.await(20, TimeUnit.SECONDS)).isTrue();
		session.append(note("stop " + questions.get(0).id()));
		assertThat(secondStarted.await(20, TimeUnit.SECONDS)).isTrue();

		for (int renewal = 0; renewal < 3; renewal++) {
			server.drainer().heartbeat();
		}
		releaseSecond.countDown();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ?", session.id()) == 0);
		assertThat(secondReason.get()).isNull();
		assertThat(notes(session)).extracting((e) -> e.payload(Note.class).text())
			.containsExactly("stop " + questions.get(0).id(), "stopped q1", "answer to q2");
	}

	/**
	 * §6.4: whatever the consumer's code throws ends its attempt as a failure. An abort condition that
	 * throws an {@code Error} (here an assertion; a stack overflow alike) while the run's start is
	 * decided fails the attempt, which is dead-lettered with what it threw, instead of leaving a run
	 * that never ends holding the unit, its lease renewed for ever.
	 */
	@Test
	void anAbortConditionThatThrowsAnErrorFailsTheAttemptInsteadOfHoldingTheUnitForEver() {
		Consumer answers = Consumer.builder("chat", "answers")
			.types("message.sent")
			.abortOn("note", (trigger, arrived) -> {
				throw new AssertionError("cannot compare note " + arrived.index() + " with question " + trigger.index());
			})
			.run((context) -> null);
		A2Server server = this.support.server(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withMaxFailures(1),
				answers);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		// one append: the question's start is decided with the note in the log behind it
		session.append(message("q1"), note("garbled"));

		assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).as("the drainer is idle").isTrue();
		assertThat(server.deadLetters("chat", session.id(), "answers", 10)).singleElement()
			.satisfies((dead) -> assertThat(dead.lastError()).isEqualTo("AssertionError: cannot compare note 2 with question 1"));
	}

	@Test
	void aCursorDoesNotStartTheEventsAnAbortEventAlreadyFollowsAndRunsTheRest() {
		List<String> ran = new CopyOnWriteArrayList<>();
		Consumer reader = Consumer.builder("chat", "reader")
			.types("message.sent")
			.lane(Lane.fixed("reader"))
			.abortOn("note", (trigger, arrived) -> arrived.payload(Note.class).text().equals("stop"))
			.run((context) -> {
				ran.add(context.event().payload(MessageSent.class).text());
				return null;
			});
		try (LogCapture log = new LogCapture()) {
			A2Server server = this.support.server(SHORT_LEASE, reader);
			Session session = server.session("chat", A2TestSupport.newSessionId());
			// one append: the cursor's claim finds the stop in the log behind q1 and q2
			session.append(message("q1"), message("q2"), note("stop"), message("q3"));
			assertThat(session.consume("reader")).isEqualTo(4);

			assertThat(ran).containsExactly("q3");
			assertThat(log.lines("Consumer 'reader' did not start its run of event")
				.stream()
				.filter((line) -> line.contains(session.id()))).hasSize(2);
			server.drainer().heartbeat();
			assertThat(ran).containsExactly("q3");
		}
	}

	@Test
	void aClearAbortsTheRunningAnswerWithALogLineAndAnObservationAndCommitsNothingItReturns() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		List<String> ran = new CopyOnWriteArrayList<>();
		Consumer assistant = Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed(Lane.KeyInput::session))
			.abortOn("note")
			.run((context) -> {
				ran.add(context.event().payload(MessageSent.class).text());
				started.countDown();
				TestContracts.blockUntilAborted();
				return note("stopped");
			});
		try (LogCapture log = new LogCapture()) {
			A2Server server = this.support.server(SHORT_LEASE, assistant);
			Session session = server.session("chat", A2TestSupport.newSessionId());
			session.append(message("q1"), message("q2"));
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			long marker = session.clear();

			assertAbortedByTheClear(log, session, marker);
			server.sweep();
			assertThat(ran).containsExactly("q1");
			// the session started over: nothing of the old conversation comes back into it
			assertThat(session.history(0, 100).events()).isEmpty();
		}
	}

	/** As on the instance that cleared: it was aborted as a claim lost, without a line (found in a trial of three instances). */
	@Test
	void aClearMadeOnAnotherInstanceAbortsTheRunningAnswerAsAClearWithItsLogLine() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		Consumer assistant = Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed(Lane.KeyInput::session))
			.run((context) -> {
				started.countDown();
				TestContracts.blockUntilAborted();
				return note("stopped");
			});
		try (LogCapture log = new LogCapture()) {
			A2Server running = this.support.server(SHORT_LEASE, assistant);
			Session session = running.session("chat", A2TestSupport.newSessionId());
			session.append(message("q1"));
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			long marker = this.support.server().session("chat", session.id()).clear();

			assertAbortedByTheClear(log, session, marker);
		}
	}

	/** The assistant's run of event 1 was aborted by the clear at {@code marker}: its log line and its observation. */
	private void assertAbortedByTheClear(LogCapture log, Session session, long marker) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> !log.lines("Consumer 'assistant' aborted its run of event 1 of session '" + session.id() + "'").isEmpty());
		assertThat(log.lines("aborted its run of event 1 of session '" + session.id() + "'")).singleElement()
			.asString()
			.contains("the session was cleared at index " + marker);
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> TestObservationRegistryAssert.assertThat(this.support.observations)
			.hasAnObservation((observation) -> observation.hasNameEqualTo(A2Observations.EVENT)
				.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "aborted")
				.hasHighCardinalityKeyValue(A2Observations.SESSION, session.id())
				.hasHighCardinalityKeyValue(A2Observations.ABORTED_BY, "a2.cleared")));
	}

	@Test
	void aClearInATransactionThatRollsBackAbortsNothingAndTheRunCommitsWhatItReturns() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicReference<A2Exception> abort = new AtomicReference<>();
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent").run((context) -> {
			context.signal().onAbort(() -> abort.set(context.signal().reason()));
			started.countDown();
			release.await(60, TimeUnit.SECONDS);
			return note("echo");
		});
		A2Server server = this.support.server(echo);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("work"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();

		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.support.dataSource));
		assertThatThrownBy(() -> transactions.executeWithoutResult((status) -> {
			session.clear();
			throw new IllegalStateException("the application fails after clearing");
		})).hasMessage("the application fails after clearing");
		assertThat(abort.get()).as("what aborted the run").isNull();
		release.countDown();

		// the session was never cleared: the run's end commits what it returned
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(session.history(0, 10).events()).extracting(Event::type)
				.containsExactly("message.sent", "note"));
		assertThat(abort.get()).isNull();
	}

	@Test
	void aClearInATransactionAbortsTheRunningAttemptOnceItCommits() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		AtomicReference<A2Exception> abort = new AtomicReference<>();
		Consumer slow = Consumer.builder("chat", "slow").types("message.sent").run((context) -> {
			context.signal().onAbort(() -> abort.set(context.signal().reason()));
			started.countDown();
			TestContracts.blockUntilAborted();
			return note("never committed");
		});
		A2Server server = this.support.server(slow);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("work"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();

		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.support.dataSource));
		transactions.executeWithoutResult((status) -> {
			session.clear();
			assertThat(abort.get()).as("an abort before the clear commits").isNull();
		});

		await().atMost(Duration.ofSeconds(20)).until(() -> abort.get() != null);
		assertThat(abort.get().code()).isEqualTo(ErrorCode.ABORTED);
		server.sweep();
		assertThat(session.history(0, 10).events()).isEmpty();
	}

	/**
	 * Stops land at random points of many sessions' two questions, some while the second one is being
	 * claimed, with heartbeats scanning all the while: every question either did not start (logged) or
	 * ran once to an end event of its own, and nothing is left over.
	 */
	@Test
	void stopsArrivingWhileQuestionsAreClaimedNeverLeaveARunWithoutItsEnd() throws Exception {
		int sessions = 20;
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		Consumer assistant = Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed(Lane.KeyInput::session))
			.abortOn("note", (trigger, arrived) -> arrived.payload(Note.class).text().equals("stop"))
			.run((context) -> {
				String question = context.event().payload(MessageSent.class).text();
				runs.computeIfAbsent(question, (q) -> new AtomicInteger()).incrementAndGet();
				try {
					// streaming an answer for a few milliseconds
					new CountDownLatch(1).await(ThreadLocalRandom.current().nextInt(15), TimeUnit.MILLISECONDS);
				}
				catch (InterruptedException ex) {
					// stopped
				}
				return note((context.signal().isAborted() ? "stopped " : "done ") + question);
			});
		try (LogCapture log = new LogCapture()) {
			A2Server server = this.support.server(SHORT_LEASE, assistant);
			AtomicBoolean scanning = new AtomicBoolean(true);
			Thread heartbeats = new Thread(() -> {
				while (scanning.get()) {
					server.drainer().heartbeat();
				}
			});
			heartbeats.start();
			List<Session> all = new ArrayList<>();
			for (int i = 0; i < sessions; i++) {
				Session session = server.session("chat", A2TestSupport.newSessionId());
				all.add(session);
				session.append(message(session.id() + "/q1"), message(session.id() + "/q2"));
				new CountDownLatch(1).await(ThreadLocalRandom.current().nextInt(20), TimeUnit.MILLISECONDS);
				session.append(note("stop"));
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> this.support.count("SELECT count(*) FROM a2_work") == 0);
			scanning.set(false);
			heartbeats.join();

			for (Session session : all) {
				List<String> ends = notes(session).stream()
					.map((e) -> e.payload(Note.class).text())
					.filter((text) -> !text.equals("stop"))
					.toList();
				for (int index = 1; index <= 2; index++) {
					String question = session.id() + "/q" + index;
					boolean notStarted = !log.lines("did not start its run of event " + index + " of session '" + session.id() + "'")
						.isEmpty();
					int ran = runs.getOrDefault(question, new AtomicInteger()).get();
					long ended = ends.stream().filter((text) -> text.endsWith(" " + question)).count();
					assertThat(notStarted ? 0 : 1).as(question + " ran once unless it was not started").isEqualTo(ran);
					assertThat(ended).as(question + " has an end event exactly when it ran").isEqualTo(ran);
				}
			}
		}
	}

	@Test
	void aStopThatArrivesWhileNoAttemptRunsEndsWhatTheCrashedAttemptBegan() throws Exception {
		CountDownLatch begun = new CountDownLatch(1);
		List<Integer> attempts = new CopyOnWriteArrayList<>();
		AtomicReference<A2Exception> reason = new AtomicReference<>();
		Consumer assistant = Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed(Lane.KeyInput::session))
			.abortOn("note", (trigger, arrived) -> arrived.payload(Note.class).text().equals("stop"))
			.run((context) -> {
				attempts.add(context.attempt());
				if (context.signal().isAborted()) {
					reason.set(context.signal().reason());
					return note("stopped");
				}
				context.session().append("words", note("first words"));
				begun.countDown();
				TestContracts.blockUntilAborted();
				return note("answer");
			});
		A2Server crashing = this.support.server(assistant);
		Session session = crashing.session("chat", A2TestSupport.newSessionId());
		session.append(message("q"));
		assertThat(begun.await(20, TimeUnit.SECONDS)).isTrue();
		crashing.halt();
		// the user stops the answer while no instance runs it
		this.support.server().session("chat", session.id()).append(note("stop"));

		A2Server survivor = this.support.server(assistant);
		survivor.sweep();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ?", session.id()) == 0);
		assertThat(notes(session)).extracting((note) -> note.payload(Note.class).text())
			.containsExactly("first words", "stop", "stopped");
		assertThat(attempts).containsExactly(1, 2);
		assertThat(reason.get().code()).isEqualTo(ErrorCode.ABORTED);
	}

	@Test
	void aStopThatArrivesWhileARetryWaitsKeepsTheRetryFromStartingWhenTheFailedAttemptLeftNothing() {
		List<Integer> attempts = new CopyOnWriteArrayList<>();
		Consumer assistant = Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed(Lane.KeyInput::session))
			.abortOn("note", (trigger, arrived) -> arrived.payload(Note.class).text().equals("stop"))
			.run((context) -> {
				attempts.add(context.attempt());
				if (context.attempt() == 1) {
					throw new IllegalStateException("the provider is down");
				}
				return note("answer");
			});
		A2Server server = this.support.server(assistant);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("q"));
		await().atMost(Duration.ofSeconds(20)).until(() -> this.support
			.count("SELECT count(*) FROM a2_work WHERE session_id = ? AND failures = 1", session.id()) == 1);
		session.append(note("stop"));

		this.support.clock.advance(Duration.ofMinutes(10));
		server.sweep();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ?", session.id()) == 0);
		assertThat(attempts).containsExactly(1);
		assertThat(notes(session)).extracting((note) -> note.payload(Note.class).text()).containsExactly("stop");
	}

	private static List<Event> notes(Session session) {
		return session.history(0, 1000).events().stream().filter((e) -> e.type().equals("note")).toList();
	}

}
