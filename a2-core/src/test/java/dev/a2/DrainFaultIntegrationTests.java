package dev.a2;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.TestContracts.MessageSent;
import dev.a2.TestContracts.Note;
import dev.a2.store.DeadLetter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.a2.TestContracts.message;
import static dev.a2.TestContracts.note;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a user cares about when instances crash, stall or share the work: every event processed, no
 * effect twice, order kept within a lane.
 */
class DrainFaultIntegrationTests {

	private static final int SESSIONS = Integer.getInteger("a2.test.sessions", 100);

	/** Each of the two writers appends one event to every session per round: 100 × 50 × 2 = 10,000. */
	private static final int ROUNDS = Integer.getInteger("a2.test.rounds", 50);

	private static final long EVENTS = 2L * SESSIONS * ROUNDS;

	private final DrainTestSupport support = new DrainTestSupport("faults");

	@AfterEach
	void halt() {
		this.support.close();
	}

	@Test
	void twoInstancesDrainTenThousandEventsOnceEachInOrder() throws Exception {
		Map<String, List<Long>> perKey = new ConcurrentHashMap<>();
		Map<String, List<Long>> perCursor = new ConcurrentHashMap<>();
		AtomicInteger keyedRuns = new AtomicInteger();
		AtomicInteger cursorRuns = new AtomicInteger();
		Consumer keyed = Consumer.builder("chat", "keyed")
			.types("message.sent")
			.lane(Lane.keyed((input) -> input.session() + "/" + ((MessageSent) input.payload()).author()))
			.run((context) -> {
				keyedRuns.incrementAndGet();
				perKey.computeIfAbsent(context.session().id() + "/" + context.event().payload(MessageSent.class).author(),
						(k) -> new CopyOnWriteArrayList<>()).add(context.event().index());
				return note("keyed " + context.event().index());
			});
		Consumer cursor = Consumer.builder("chat", "cursor")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				cursorRuns.incrementAndGet();
				perCursor.computeIfAbsent(context.session().id(), (k) -> new CopyOnWriteArrayList<>()).add(context.event().index());
				return note("cursor " + context.event().index());
			});
		// 20,000 runs: the test registry's record of them all would take the CPU the drain needs
		A2Server first = this.support.unrecordedServer(keyed, cursor);
		A2Server second = this.support.unrecordedServer(keyed, cursor);

		List<String> sessions = new ArrayList<>();
		for (int s = 0; s < SESSIONS; s++) {
			sessions.add("s-" + s);
		}
		// both instances append, so both start drains; each also sweeps now and then
		List<Thread> writers = new ArrayList<>();
		List<Throwable> refused = new CopyOnWriteArrayList<>();
		for (A2Server server : List.of(first, second)) {
			Thread writer = new Thread(() -> {
				for (int round = 0; round < ROUNDS; round++) {
					for (String session : sessions) {
						List<NewEvent> batch = List.of(NewEvent.of("message.sent", new MessageSent("m", "a" + (round % 2))));
						server.session("chat", session).append(batch);
					}
					if (round % 10 == 0) {
						server.sweep();
					}
				}
			});
			writer.setUncaughtExceptionHandler((thread, ex) -> refused.add(ex));
			writer.start();
			writers.add(writer);
		}
		// the appends take longest on a busy machine (on Citus each goes on to a worker): every one is
		// waited for before the drain is, or the count below would stay short of the events never appended
		for (Thread writer : writers) {
			writer.join(Duration.ofMinutes(10).toMillis());
			assertThat(writer.isAlive()).as("a writer still appending after 10 minutes").isFalse();
		}
		assertThat(refused).as("appends refused").isEmpty();
		await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
			first.sweep();
			second.sweep();
			assertThat(this.support.count("SELECT count(*) FROM a2_event WHERE type = 'note'")).isEqualTo(2 * EVENTS);
		});
		assertThat(this.support.count("SELECT count(*) FROM a2_event WHERE type = 'message.sent'")).isEqualTo(EVENTS);
		assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero();
		assertThat(this.support.count("SELECT count(*) FROM a2_cursor WHERE position <> target")).isZero();
		assertThat(keyedRuns.get()).as("keyed runs (a run may repeat only after a lost claim)").isEqualTo(EVENTS);
		assertThat(cursorRuns.get()).isEqualTo(EVENTS);
		perKey.values().forEach((indexes) -> assertThat(indexes).isSorted().doesNotHaveDuplicates());
		perCursor.values().forEach((indexes) -> assertThat(indexes).isSorted().doesNotHaveDuplicates().hasSize(2 * ROUNDS));
		assertThat(perKey).hasSize(SESSIONS * 2);
	}

	@Test
	void crashMidRunIsTakenOverAtTheNextSweepWithEffectsOnce() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		AtomicInteger attempts = new AtomicInteger();
		Consumer worker = Consumer.builder("chat", "worker").types("message.sent").run((context) -> {
			context.session().append("effect", note("charged the card"));
			if (attempts.incrementAndGet() == 1) {
				started.countDown();
				TestContracts.blockUntilAborted();
			}
			return note("receipt");
		});
		A2Server crashing = this.support.server(worker);
		Session session = crashing.session("chat", A2TestSupport.newSessionId());
		session.append(message("pay"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
		crashing.halt();

		// its identity ended with it: the lease need not lapse (the clock does not move)
		A2Server survivor = this.support.server(worker);
		assertThat(survivor.sweep()).isOne();
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(noteTexts(session)).containsExactly("charged the card", "receipt"));
		assertThat(attempts.get()).isEqualTo(2);
		assertThat(session.history(0, 10).events().get(2).cause().attempt()).isEqualTo(2);
	}

	/**
	 * An attempt that stalled past its lease (a long pause, a frozen VM) wakes up before its heartbeat
	 * finds the claim lost: what it appends is refused, as what it returns is. Its appends landed among
	 * the new attempt's events (after a reply's end, in a trial with two instances).
	 */
	@Test
	void aZombieAttemptCanNeitherAppendNorCompleteNorCommitWhatItReturns() throws Exception {
		CountDownLatch zombieStarted = new CountDownLatch(1);
		CountDownLatch releaseZombie = new CountDownLatch(1);
		AtomicReference<A2Exception> zombieReason = new AtomicReference<>();
		AtomicReference<A2Exception> zombieAppend = new AtomicReference<>();
		Consumer worker = Consumer.builder("chat", "worker").types("message.sent").run((context) -> {
			if (context.attempt() == 1) {
				context.session().append("early", note("appended by attempt 1 in time"));
				zombieStarted.countDown();
				releaseZombie.await(60, TimeUnit.SECONDS);
				try {
					context.session().append("late", note("appended by the zombie"));
				}
				catch (A2Exception ex) {
					zombieAppend.set(ex);
				}
				context.signal().onAbort(() -> zombieReason.set(context.signal().reason()));
				return note("from the zombie");
			}
			return note("from the takeover");
		});
		A2Server stalled = this.support.manualServer(worker);
		A2Server other = this.support.manualServer(worker);
		Session session = stalled.session("chat", A2TestSupport.newSessionId());
		session.append(message("work"));
		assertThat(zombieStarted.await(20, TimeUnit.SECONDS)).isTrue();

		this.support.clock.advance(DrainTestSupport.LEASE.plusSeconds(1));
		other.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(noteTexts(session))
			.containsExactly("appended by attempt 1 in time", "from the takeover"));

		releaseZombie.countDown();
		await().atMost(Duration.ofSeconds(20)).until(() -> zombieReason.get() != null);
		assertThat(zombieAppend.get()).as("the zombie's append").isNotNull();
		assertThat(zombieAppend.get().code()).isEqualTo(ErrorCode.SUPERSEDED_ATTEMPT);
		assertThat(zombieAppend.get().getMessage()).contains("another attempt took the unit over");
		assertThat(zombieReason.get().code()).isEqualTo(ErrorCode.SUPERSEDED_ATTEMPT);
		assertThat(noteTexts(session)).containsExactly("appended by attempt 1 in time", "from the takeover");
		assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero();
	}

	/** Past its lease with no other attempt begun, a run's append renews the claim and goes on. */
	@Test
	void anAttemptPastItsLeaseThatNoOtherTookOverRenewsItsClaimAndAppendsOn() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch go = new CountDownLatch(1);
		Consumer worker = Consumer.builder("chat", "slow").types("message.sent").run((context) -> {
			started.countDown();
			go.await(60, TimeUnit.SECONDS);
			context.session().append("late", note("appended after the lease"));
			return note("done");
		});
		A2Server server = this.support.manualServer(worker);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("work"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();

		this.support.clock.advance(DrainTestSupport.LEASE.plusSeconds(1));   // no heartbeat, no other instance
		go.countDown();
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(noteTexts(session)).containsExactly("appended after the lease", "done"));
		assertThat(session.history(0, 10).events()).allSatisfy((event) -> assertThat(event.index() == 1
				|| event.cause().attempt() == 1).isTrue());
		assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero();
	}

	@Test
	void attemptsThatKeepDyingAreDeadLetteredWhenTakeoverWouldExceedTheLimit() throws Exception {
		DrainSettings settings = DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withMaxFailures(3);
		AtomicInteger attempts = new AtomicInteger();
		Consumer hanging = Consumer.builder("chat", "hanging").types("message.sent").run((context) -> {
			attempts.incrementAndGet();
			TestContracts.blockUntilAborted();
			return null;
		});
		Session session = null;
		for (int attempt = 1; attempt <= 3; attempt++) {
			A2Server server = this.support.server(settings, hanging);
			if (session == null) {
				session = server.session("chat", A2TestSupport.newSessionId());
				session.append(message("hang"));
			}
			else {
				this.support.clock.advance(DrainTestSupport.LEASE.plusSeconds(1));
				server.sweep();
			}
			int expected = attempt;
			await().atMost(Duration.ofSeconds(20)).until(() -> attempts.get() == expected);
			server.halt();
		}
		A2Server last = this.support.server(settings, hanging);
		try (LogCapture log = new LogCapture()) {
			this.support.clock.advance(DrainTestSupport.LEASE.plusSeconds(1));
			last.sweep();
			// told, as the dead letter of a run that throws is: the sweep's only line said the unit would run again
			assertThat(log.lines("Dead-lettered 1 consumer unit(s) whose every attempt ended before it finished (3 attempts"))
				.hasSize(1);
		}
		List<DeadLetter> dead = last.deadLetters("chat", session.id(), "hanging", 10);
		assertThat(dead).singleElement().satisfies((letter) -> {
			assertThat(letter.attempts()).isEqualTo(3);
			assertThat(letter.failures()).isZero();
			assertThat(letter.lastError()).isEqualTo("every attempt ended before it finished");
		});
		assertThat(attempts.get()).isEqualTo(3);
	}

	@Test
	void gracefulStopLetsRunsFinishThenReleasesTheRestForAnotherInstanceAtOnce() throws Exception {
		List<String> finished = new CopyOnWriteArrayList<>();
		CountDownLatch stuckRunning = new CountDownLatch(1);
		// aborted, "stuck" winds down slowly (as a model's stream being cancelled may): it still runs when the stop ends
		CountDownLatch woundDown = new CountDownLatch(1);
		Consumer mixed = Consumer.builder("chat", "mixed").types("message.sent").run((context) -> {
			String text = context.event().payload(MessageSent.class).text();
			if (context.attempt() == 1 && text.equals("stuck")) {
				stuckRunning.countDown();
				TestContracts.blockUntilAborted();
				woundDown.await(60, TimeUnit.SECONDS);
				return note("never");
			}
			finished.add(text + "@" + context.attempt());
			return note(text + " done");
		});
		A2Server stopping = A2TestSupport.server(this.support.dataSource)
			.clock(this.support.clock)
			.drain(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE))
			.stopGrace(Duration.ofMillis(500))
			.consumer(mixed)
			.build();
		Session session = stopping.session("chat", A2TestSupport.newSessionId());
		session.append(message("stuck"));
		session.append(message("quick"));
		await().atMost(Duration.ofSeconds(20)).until(() -> finished.contains("quick@1"));
		// on a busy machine "stuck" may not have started yet: the stop would have nothing to wait for
		assertThat(stuckRunning.await(20, TimeUnit.SECONDS)).as("'stuck' running").isTrue();

		try (LogCapture log = new LogCapture()) {
			stopping.close();
			// closed again, as Spring's context does (the drain's lifecycle stops it, then the bean's destroy
			// method closes it): the second does nothing, where it waited the whole grace once more
			stopping.close();
			// the wait and the hand-over are said: an operator sees why a stop takes its grace
			assertThat(log.lines("Stopping: waiting up to 500 ms (a2.drain.stop-grace) for 1 running consumer attempt(s)"))
				.hasSize(1);
			assertThat(log.lines("Stopped 1 consumer attempt(s) still running after the stop grace and released their "
					+ "claims; another instance runs them again at once: 'mixed' on event 1 of session '" + session.id() + "'"))
				.hasSize(1);
		}
		finally {
			woundDown.countDown();
		}
		assertThat(this.support.count("SELECT count(*) FROM a2_work WHERE claim IS NOT NULL")).as("released").isZero();
		A2Server other = this.support.server(mixed);
		other.sweep();
		// what a run returns is stored by its finish, after the run's code has returned: waited for too
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(noteTexts(session)).containsExactlyInAnyOrder("quick done", "stuck done"));
		assertThat(finished).contains("stuck@2");
	}

	/** Rolling deploys are no crashes: a unit released by stopping instances is taken over after a crash as a new one is. */
	@Test
	void attemptsReleasedByGracefulStopsDoNotCountTowardsTheTakeoversThatDeadLetterAUnit() throws Exception {
		AttemptsThatBlock worker = new AttemptsThatBlock(3);
		DrainSettings twoAttempts = DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withMaxFailures(2);
		Session session = null;
		for (int deploy = 1; deploy <= 2; deploy++) {
			A2Server stopping = A2TestSupport.server(this.support.dataSource)
				.clock(this.support.clock)
				.drain(twoAttempts)
				.stopGrace(Duration.ofMillis(100))
				.consumer(worker.consumer)
				.build();
			if (session == null) {
				session = stopping.session("chat", A2TestSupport.newSessionId());
				session.append(message("work"));
			}
			else {
				stopping.sweep();
			}
			assertThat(worker.started(deploy)).isTrue();
			stopping.close();
		}
		A2Server crashing = this.support.server(twoAttempts, worker.consumer);
		crashing.sweep();
		assertThat(worker.started(3)).isTrue();
		crashing.halt();

		A2Server survivor = this.support.server(twoAttempts, worker.consumer);
		survivor.sweep();
		String id = session.id();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ?", id) == 0);
		assertThat(worker.attempts).containsExactly(1, 2, 3, 4);
		assertThat(survivor.deadLetters("chat", id, "worker", 10)).isEmpty();
	}

	private List<String> noteTexts(Session session) {
		return session.history(0, 1000)
			.events()
			.stream()
			.filter((e) -> e.type().equals("note"))
			.map((e) -> e.payload(Note.class).text())
			.toList();
	}

}
