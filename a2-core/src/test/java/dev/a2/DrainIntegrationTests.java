package dev.a2;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.TestContracts.MessageSent;
import dev.a2.TestContracts.Note;
import dev.a2.store.DeadLetter;
import dev.a2.test.AtOnce;
import dev.a2.test.HeldRows;
import dev.a2.test.Latches;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import jakarta.validation.constraints.NotBlank;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static dev.a2.TestContracts.message;
import static dev.a2.TestContracts.note;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class DrainIntegrationTests {

	private final DrainTestSupport support = new DrainTestSupport("drain");

	@AfterEach
	void halt() {
		this.support.close();
	}

	@Test
	void independentConsumerRunsEachEventAndCommitsWhatItReturns() {
		Consumer echo = Consumer.builder("chat", "echo")
			.types("message.sent")
			.run((context) -> note("echo of " + context.event().payload(MessageSent.class).text()));
		A2Server server = this.support.server(echo);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		List<Event> sent = session.append(message("a"), message("b"), message("c"));

		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(notes(session)).hasSize(3));
		List<Event> notes = notes(session);
		assertThat(notes).extracting((e) -> e.payload(Note.class).text())
			.containsExactlyInAnyOrder("echo of a", "echo of b", "echo of c");
		for (Event trigger : sent) {
			String derived = DerivedIds.returnedEvent(trigger.id(), 0, "echo");
			Event written = notes.stream().filter((n) -> n.id().equals(derived)).findFirst().orElseThrow();
			assertThat(written.cause()).isEqualTo(new Cause("echo", null, trigger.index(), 1));
		}
		await().untilAsserted(() -> assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero());
	}

	@Test
	void keyedLanesRunInIndexOrderPerKeyAndKeysRunConcurrently() {
		Map<String, List<Long>> seen = new ConcurrentHashMap<>();
		Consumer perAuthor = Consumer.builder("chat", "per-author")
			.types("message.sent")
			.lane(Lane.keyed((input) -> ((MessageSent) input.payload()).author()))
			.run((context) -> {
				MessageSent sent = context.event().payload(MessageSent.class);
				seen.computeIfAbsent(sent.author(), (k) -> new CopyOnWriteArrayList<>()).add(context.event().index());
				return null;
			});
		A2Server server = this.support.server(perAuthor);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		for (int i = 0; i < 60; i++) {
			session.append(NewEvent.of("message.sent", new MessageSent("m" + i, "author-" + (i % 3))));
		}
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(seen.values().stream().mapToInt(List::size).sum()).isEqualTo(60));
		assertThat(seen).hasSize(3);
		seen.values().forEach((indexes) -> assertThat(indexes).isSorted().doesNotHaveDuplicates().hasSize(20));
	}

	/**
	 * A key orders the units of one session, as every claim reads one session: an order workflow with a
	 * session per order and its customer as the key gets no order across the customer's sessions, and a
	 * dead letter blocks the customer's later units of that session only.
	 */
	@Test
	void aKeyedLaneOrdersTheUnitsOfOneSessionOnly() {
		List<String> done = new CopyOnWriteArrayList<>();
		Consumer perAuthor = Consumer.builder("chat", "per-author")
			.types("message.sent")
			.lane(Lane.keyed((input) -> ((MessageSent) input.payload()).author()))
			.run((context) -> {
				MessageSent sent = context.event().payload(MessageSent.class);
				if (sent.text().equals("poison")) {
					throw new NonRetriableException("declined");
				}
				done.add(context.session().id() + " " + sent.text());
				return null;
			});
		A2Server server = this.support.server(perAuthor);
		Session first = server.session("chat", A2TestSupport.newSessionId());
		Session second = server.session("chat", A2TestSupport.newSessionId());
		first.append(NewEvent.of("message.sent", new MessageSent("poison", "ann")),
				NewEvent.of("message.sent", new MessageSent("behind", "ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> server.deadLetters("chat", first.id(), null, 10).size() == 1);
		second.append(NewEvent.of("message.sent", new MessageSent("elsewhere", "ann")));

		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(done).containsExactly(second.id() + " elsewhere"));
		assertThat(this.support.count("SELECT count(*) FROM a2_work WHERE session_id = '" + first.id() + "' AND NOT dead"))
			.as("ann's later unit in the session of the dead letter waits behind it").isEqualTo(1);
	}

	@Test
	void unitsAndCursorsTogetherRunNoMoreAtOnceThanTheConcurrency() {
		AtomicInteger running = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		List<String> ran = new CopyOnWriteArrayList<>();
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent").run(counted(running, most, ran));
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run(counted(running, most, ran));
		A2Server server = this.support.server(
				DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withConcurrency(1), echo, projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		// each append gives the one free run permit a unit and a cursor to choose from
		for (int i = 0; i < 5; i++) {
			session.append(message("m" + i));
		}

		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(ran).hasSize(10));
		assertThat(most).hasValue(1);
		TestObservationRegistryAssert.assertThat(this.support.observations)
			.forAllObservationsWithNameEqualTo(A2Observations.DRAIN, (drain) -> drain.doesNotHaveError());
	}

	@Test
	void asManySessionsAsTheConcurrencyRunAtOnceWhenTheirWorkArrivesTogether() throws Exception {
		int sessions = 4;
		CountDownLatch allStarted = new CountDownLatch(sessions);
		// each run holds its permit until every session's run has started: one that never starts keeps them all waiting
		Consumer waiting = Consumer.builder("chat", "waiting").types("message.sent").run((context) -> {
			allStarted.countDown();
			allStarted.await(30, TimeUnit.SECONDS);
			return null;
		});
		A2Server server = this.support.server(
				DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withConcurrency(sessions), waiting);
		// one transaction: every session's claim loop starts as it commits, and they compete for the permits
		new TransactionTemplate(new DataSourceTransactionManager(this.support.dataSource)).executeWithoutResult((status) -> {
			for (int i = 0; i < sessions; i++) {
				server.session("chat", A2TestSupport.newSessionId()).append(message("m" + i));
			}
		});

		assertThat(allStarted.await(20, TimeUnit.SECONDS)).as("every session's run started").isTrue();
	}

	/**
	 * §6.7: per-session fairness is bounded. Sessions with a backlog (a bulk import) and sessions whose
	 * one event arrives while the run permits are all busy take turns for the permits as they free up:
	 * a backlog does not go on to its end while the others wait.
	 */
	@Test
	void sessionsWaitingForARunPermitTakeTurnsWithSessionsThatHaveABacklog() throws Exception {
		CountDownLatch firstRunHeld = new CountDownLatch(1);
		CountDownLatch releaseFirstRun = new CountDownLatch(1);
		List<String> ran = new CopyOnWriteArrayList<>();
		Consumer worker = Consumer.builder("chat", "worker").types("message.sent").run((context) -> {
			if (ran.isEmpty() && firstRunHeld.getCount() > 0) {
				firstRunHeld.countDown();
				Latches.awaitIgnoringInterrupts(releaseFirstRun);
			}
			ran.add(context.session().id());
			return null;
		});
		A2Server server = this.support.server(
				DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withConcurrency(1), worker);
		List<String> backlogs = new ArrayList<>();
		for (int b = 0; b < 3; b++) {
			Session backlog = server.session("chat", "backlog-" + A2TestSupport.newSessionId());
			List<NewEvent> imported = new ArrayList<>();
			for (int i = 0; i < 30; i++) {
				imported.add(message("imported " + i));
			}
			backlog.append(imported.toArray(NewEvent[]::new));
			backlogs.add(backlog.id());
			assertThat(firstRunHeld.await(20, TimeUnit.SECONDS)).isTrue();
		}
		List<String> others = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			Session other = server.session("chat", A2TestSupport.newSessionId());
			other.append(message("hello"));
			others.add(other.id());
		}
		// every session's claim loop has found the one permit taken
		assertThat(server.awaitDrain((activity) -> activity.draining() == 0, Duration.ofSeconds(20))).isTrue();
		releaseFirstRun.countDown();

		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(ran).hasSize(100));
		int lastOther = others.stream().mapToInt(ran::indexOf).max().orElseThrow();
		long backlogRunsBefore = ran.subList(0, lastOther).stream().filter(backlogs::contains).count();
		// in turn: a few rounds of the three backlogs at most (a session's loop may find the permits taken a
		// little after the others'), never a backlog's thirty runs
		assertThat(backlogRunsBefore).as("backlog runs before the last other session's one run: %s", ran).isLessThan(15);
	}

	@Test
	void fixedLaneCursorWalksItsTypesInOrder() {
		List<Long> seen = new CopyOnWriteArrayList<>();
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				seen.add(context.event().index());
				return null;
			});
		A2Server server = this.support.server(projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		List<Long> expected = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			Event event = session.append((i % 3 == 0) ? note("skip") : message("m" + i)).get(0);
			if (event.type().equals("message.sent")) {
				expected.add(event.index());
			}
		}
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(seen).hasSameSizeAs(expected));
		assertThat(seen).containsExactlyElementsOf(expected);
		assertThat(session.consume("projection")).isEqualTo(30);
	}

	@Test
	void aCursorFailingMidRunKeepsWhatCompletedBeforeAndResumesAtTheFailure() {
		AtomicInteger failuresLeft = new AtomicInteger(1);
		List<Long> seen = new CopyOnWriteArrayList<>();
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				seen.add(context.event().index());
				if (context.event().index() == 3 && failuresLeft.getAndDecrement() > 0) {
					throw new IllegalStateException("not now");
				}
				return note("projected " + context.event().index());
			});
		A2Server server = this.support.server(projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("1"), message("2"), message("3"), message("4"), message("5"));
		await().atMost(Duration.ofSeconds(20)).until(() -> failures(session.id(), "projection") == 1);
		assertThat(notes(session)).extracting((e) -> e.payload(Note.class).text()).containsExactly("projected 1", "projected 2");
		assertThat(this.support.count("SELECT position FROM a2_cursor WHERE session_id = ?", session.id())).isEqualTo(2);

		this.support.clock.advance(Duration.ofSeconds(1));
		server.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(notes(session)).hasSize(5));
		assertThat(seen).containsExactly(1L, 2L, 3L, 3L, 4L, 5L);
	}

	/**
	 * Two orders whose clients sent their first event with the same id: an effect keyed by the
	 * trigger's id alone would charge the second order as a repeat of the first's charge. The effect key
	 * tells the sessions apart, and stays the same when the run that charged fails and runs again.
	 */
	@Test
	void anEffectKeyIsTheSameAtEveryAttemptAndDiffersBetweenSessionsThatShareAnEventId() {
		Map<String, List<String>> keysBySession = new ConcurrentHashMap<>();
		Map<String, String> charged = new ConcurrentHashMap<>();
		Consumer payments = Consumer.builder("chat", "payments").types("message.sent").run((context) -> {
			String key = context.effectKey("charge");
			keysBySession.computeIfAbsent(context.session().id(), (k) -> new CopyOnWriteArrayList<>()).add(key);
			// the provider drops a repeat of a key it has seen
			charged.putIfAbsent(key, context.session().id());
			if (context.attempt() == 1) {
				throw new IllegalStateException("the connection dropped after the charge");
			}
			return note("charged");
		});
		A2Server server = this.support.server(payments);
		Session first = server.session("chat", A2TestSupport.newSessionId());
		Session second = server.session("chat", A2TestSupport.newSessionId());
		first.append(NewEvent.of("message.sent", new MessageSent("order", "ann"), "placed"));
		second.append(NewEvent.of("message.sent", new MessageSent("order", "bob"), "placed"));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> failures(first.id(), "payments") == 1 && failures(second.id(), "payments") == 1);

		this.support.clock.advance(Duration.ofMinutes(1));
		server.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(notes(first)).hasSize(1);
			assertThat(notes(second)).hasSize(1);
		});
		assertThat(keysBySession.get(first.id())).hasSize(2).containsOnly(keysBySession.get(first.id()).get(0));
		assertThat(keysBySession.get(second.id())).hasSize(2).containsOnly(keysBySession.get(second.id()).get(0));
		assertThat(charged).hasSize(2).containsValues(first.id(), second.id());
	}

	@Test
	void backfillStartsAtTheFirstEventAndOtherCursorsAtTheHeadTheyFirstSee() {
		A2Server before = this.support.server();
		Session old = before.session("chat", A2TestSupport.newSessionId());
		old.append(message("1"), message("2"));

		List<Long> backfilled = new CopyOnWriteArrayList<>();
		List<Long> fromHead = new CopyOnWriteArrayList<>();
		Consumer backfill = Consumer.builder("chat", "backfill").lane(Lane.fixed("all")).backfill(true).run((context) -> {
			backfilled.add(context.event().index());
			return null;
		});
		Consumer late = Consumer.builder("chat", "late").lane(Lane.fixed("late")).run((context) -> {
			fromHead.add(context.event().index());
			return null;
		});
		A2Server server = this.support.server(backfill, late);
		server.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(backfilled).containsExactly(1L, 2L));

		server.session("chat", old.id()).append(message("3"));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(backfilled).containsExactly(1L, 2L, 3L);
			assertThat(fromHead).containsExactly(3L);
		});
	}

	@Test
	void aBackfillLooksAtASweepBatchOfSessionsEachSweepAndReachesThemAllInTurn() {
		A2Server before = this.support.server();
		List<String> sessions = new ArrayList<>();
		for (int i = 1; i <= 5; i++) {
			Session session = before.session("chat", "s-" + i);
			session.append(message("before the consumer"));
			sessions.add(session.id());
		}
		List<String> backfilled = new CopyOnWriteArrayList<>();
		Consumer backfill = Consumer.builder("chat", "backfill").lane(Lane.fixed("all")).backfill(true).run((context) -> {
			backfilled.add(context.session().id());
			return null;
		});
		A2Server server = this.support.server(
				DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withSweepBatch(2), backfill);

		server.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(backfilled).hasSize(2));
		assertThat(cursorsOf("backfill")).as("the first sweep looked at the first two sessions only")
			.containsExactly("s-1", "s-2");
		// a sweep also starts at most a sweep batch of sessions with due work: sweep until all ran
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			server.sweep();
			assertThat(backfilled).hasSize(5);
		});
		assertThat(backfilled).containsExactlyInAnyOrderElementsOf(sessions);

		// a session the walk has passed, written by an instance without the consumer, is reached when it starts over
		before.session("chat", "s-0").append(message("behind the backfill"));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			server.sweep();
			assertThat(backfilled).contains("s-0");
		});
		assertThat(backfilled).hasSize(6);
	}

	private List<String> cursorsOf(String consumer) {
		return this.support.jdbc()
			.sql("SELECT session_id FROM a2_cursor WHERE consumer = ? ORDER BY session_id")
			.param(consumer)
			.query(String.class)
			.list();
	}

	@Test
	void aRerunAppendsNothingTwice() {
		AtomicInteger attempts = new AtomicInteger();
		Consumer flaky = Consumer.builder("chat", "flaky").types("message.sent").run((context) -> {
			context.session().append("progress", note("started"), note("halfway"));
			if (attempts.incrementAndGet() == 1) {
				throw new IllegalStateException("crashed after appending");
			}
			return note("done");
		});
		A2Server server = this.support.server(flaky);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("go"));
		await().atMost(Duration.ofSeconds(20)).until(() -> attempts.get() == 1 && failures(session.id(), "flaky") == 1);

		this.support.clock.advance(Duration.ofSeconds(1));
		server.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(notes(session)).hasSize(3));
		assertThat(notes(session)).extracting((e) -> e.payload(Note.class).text())
			.containsExactly("started", "halfway", "done");
		assertThat(notes(session).get(0).cause().attempt()).isEqualTo(1);
		assertThat(notes(session).get(2).cause().attempt()).isEqualTo(2);
	}

	/**
	 * A unit waiting in a keyed lane behind a dead letter is no work to sweep for: its session was
	 * drained at every sweep for ever, and more such sessions than a sweep takes
	 * ({@code a2.drain.sweep-batch}) crowded out other sessions' retries (found by the observability trial).
	 */
	@Test
	void aUnitWaitingBehindADeadLetterIsNoDueWorkForTheSweep() {
		List<Long> done = new CopyOnWriteArrayList<>();
		Consumer auditor = Consumer.builder("chat", "auditor-behind")
			.types("message.sent")
			.lane(Lane.keyed((input) -> "one-lane"))
			.run((context) -> {
				if (context.event().payload(MessageSent.class).text().equals("poison")) {
					throw new NonRetriableException("cannot audit " + context.event().index());
				}
				done.add(context.event().index());
				return null;
			});
		A2Server server = this.support.server(auditor);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("poison"), message("after"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), "auditor-behind", 10)).hasSize(1));

		assertThat(server.sweep()).as("sessions the sweep starts draining").isZero();
		this.support.clock.advance(Duration.ofHours(1));
		assertThat(server.sweep()).as("sessions the sweep starts draining, an hour later").isZero();
		assertThat(done).isEmpty();

		// the skip unblocks the lane: the unit behind runs
		assertThat(server.redrive("chat", session.id(), "auditor-behind", 1, RedriveAction.SKIP)).isTrue();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(done).containsExactly(2L));
		assertThat(server.sweep()).isZero();
	}

	/**
	 * The consumer's code runs with its run's observation open: a tracer puts the run's trace in the
	 * logs it writes, and what it observes is a child of the run. It once ran outside it, every span a
	 * root and no trace id in its logs (found by the observability trial).
	 */
	@Test
	void theConsumersCodeRunsInsideItsRunsObservationAndAClaimInsideItsDrain() {
		AtomicReference<Observation.@Nullable ContextView> during = new AtomicReference<>();
		Consumer traced = Consumer.builder("chat", "traced").types("message.sent").run((context) -> {
			Observation current = this.support.observations.getCurrentObservation();
			during.set((current != null) ? current.getContextView() : null);
			context.session().append("noted", note("appended by the run"));
			return null;
		});
		A2Server server = this.support.server(traced);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		// in the application's transaction: nothing is leased ahead, the commit's drain claims the unit
		new TransactionTemplate(new DataSourceTransactionManager(this.support.dataSource))
			.executeWithoutResult((status) -> session.append(message("hello")));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(notes(session)).hasSize(1));

		assertThat(during.get()).isNotNull().satisfies((run) -> {
			assertThat(run.getName()).isEqualTo(A2Observations.EVENT);
			assertThat(run.getLowCardinalityKeyValue(A2Observations.CONSUMER).getValue()).isEqualTo("traced");
		});
		TestObservationRegistryAssert.assertThat(this.support.observations)
			.hasAnObservation((observation) -> observation.hasNameEqualTo(A2Observations.APPEND)
				.hasParentObservationContextMatching((parent) -> runOf((Observation.ContextView) parent, "traced")));
		TestObservationRegistryAssert.assertThat(this.support.observations).hasObservationWithNameEqualTo(A2Observations.CLAIM);
		TestObservationRegistryAssert.assertThat(this.support.observations)
			.forAllObservationsWithNameEqualTo(A2Observations.CLAIM, (claim) -> claim
				.hasParentObservationContextMatching((parent) -> ((Observation.ContextView) parent).getName().equals(A2Observations.DRAIN)));
	}

	private static boolean runOf(Observation.ContextView observation, String consumer) {
		return observation.getName().equals(A2Observations.EVENT)
				&& consumer.equals(observation.getLowCardinalityKeyValue(A2Observations.CONSUMER).getValue());
	}

	@Test
	void failuresBackOffByTheFormulaThenDeadLetterBlockTheLaneAndRedriveResumes() {
		AtomicInteger runs = new AtomicInteger();
		AtomicReference<Boolean> healthy = new AtomicReference<>(false);
		List<Long> done = new CopyOnWriteArrayList<>();
		Consumer strict = Consumer.builder("chat", "strict")
			.types("message.sent")
			.lane(Lane.keyed((input) -> "one-lane"))
			.run((context) -> {
				runs.incrementAndGet();
				if (!healthy.get() && context.event().payload(MessageSent.class).text().equals("poison")) {
					throw new IllegalArgumentException("cannot digest " + context.event().index());
				}
				done.add(context.event().index());
				return null;
			});
		A2Server server = this.support.server(strict);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("poison"));
		session.append(message("after"));

		for (int failure = 1; failure <= 10; failure++) {
			int expected = failure;
			await().atMost(Duration.ofSeconds(20)).until(() -> failures(session.id(), "strict") == expected);
			Instant failedAt = this.support.clock.instant();
			if (failure < 10) {
				Duration backOff = Duration.ofSeconds(1).multipliedBy(1L << (failure - 1));
				assertThat(dueAt(session.id(), "strict", 1)).as("retry after failure %d", failure).isEqualTo(failedAt.plus(backOff));
				this.support.clock.advance(backOff);
				server.sweep();
			}
		}
		List<DeadLetter> dead = server.deadLetters("chat", session.id(), null, 10);
		assertThat(dead).singleElement().satisfies((letter) -> {
			assertThat(letter.consumer()).isEqualTo("strict");
			assertThat(letter.lane()).isEqualTo("one-lane");
			assertThat(letter.index()).isEqualTo(1);
			assertThat(letter.failures()).isEqualTo(10);
			assertThat(letter.attempts()).isEqualTo(10);
			assertThat(letter.lastError()).isEqualTo("IllegalArgumentException: cannot digest 1");
			assertThat(letter.failedAt()).isEqualTo(this.support.clock.instant());
		});
		assertThat(server.deadLetters(null, null, null, 10)).hasSize(1);
		this.support.clock.advance(Duration.ofHours(1));
		server.sweep();
		assertThat(runs.get()).isEqualTo(10);
		assertThat(done).as("the lane waits behind its dead letter").isEmpty();

		TestObservationRegistryAssert.assertThat(this.support.observations)
			.hasAnObservation((observation) -> observation.hasNameEqualTo(A2Observations.EVENT)
				.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "failed")
				.hasHighCardinalityKeyValue(A2Observations.ATTEMPT, "9"))
			.hasAnObservation((observation) -> observation.hasNameEqualTo(A2Observations.EVENT)
				.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "dead_lettered")
				.hasHighCardinalityKeyValue(A2Observations.ATTEMPT, "10"));

		healthy.set(true);
		assertThat(server.redrive("chat", session.id(), "strict", 1, RedriveAction.RETRY)).isTrue();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(done).containsExactly(1L, 2L));
		assertThat(server.deadLetters("chat", session.id(), null, 10)).isEmpty();
		assertThat(server.redrive("chat", session.id(), "strict", 1, RedriveAction.RETRY)).isFalse();
	}

	@Test
	void aRedrivenCursorRetriesItsHeadAsItsNextAttempt() {
		List<Integer> attempts = new CopyOnWriteArrayList<>();
		Consumer projection = Consumer.builder("chat", "projection").types("message.sent").lane(Lane.fixed("projection"))
			.run((context) -> {
				attempts.add(context.attempt());
				if (attempts.size() == 1) {
					throw new NonRetriableException("declined");
				}
				return null;
			});
		A2Server server = this.support.server(projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("charge"));
		await().atMost(Duration.ofSeconds(20)).until(() -> server.deadLetters("chat", session.id(), "projection", 10).size() == 1);
		assertThat(server.redrive("chat", session.id(), "projection", 1, RedriveAction.RETRY)).isTrue();
		assertThat(session.consume("projection")).isEqualTo(1);
		assertThat(attempts).containsExactly(1, 2);
	}

	/** The limit of takeovers counts the attempts after a redrive: a redriven unit survives a crash as a new one does. */
	@Test
	void aRedrivenUnitIsTakenOverAfterACrashAsAnyUnitIs() throws Exception {
		AttemptsThatBlock worker = new AttemptsThatBlock(3);
		DrainSettings twoAttempts = DrainSettings.DEFAULTS.withMaxFailures(2);
		A2Server first = this.support.server(twoAttempts, worker.consumer);
		Session session = first.session("chat", A2TestSupport.newSessionId());
		session.append(message("work"));
		assertThat(worker.started(1)).isTrue();
		first.halt();
		A2Server second = this.support.server(twoAttempts, worker.consumer);
		second.sweep();
		assertThat(worker.started(2)).isTrue();
		second.halt();
		// its second attempt lapsed too: dead-lettered, then redriven by an operator
		A2Server third = this.support.server(twoAttempts, worker.consumer);
		third.sweep();
		await().atMost(Duration.ofSeconds(20)).until(() -> third.deadLetters("chat", session.id(), "worker", 10).size() == 1);
		assertThat(third.redrive("chat", session.id(), "worker", 1, RedriveAction.RETRY)).isTrue();
		assertThat(worker.started(3)).isTrue();
		third.halt();

		A2Server fourth = this.support.server(twoAttempts, worker.consumer);
		fourth.sweep();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ?", session.id()) == 0);
		assertThat(worker.attempts).containsExactly(1, 2, 3, 4);
		assertThat(fourth.deadLetters("chat", session.id(), "worker", 10)).isEmpty();
	}

	/** §5.1: attempt() is 1 on the first try; §6.4: a retry gives a fresh failure count, not a first try. */
	@Test
	void aRedrivenRunIsNotItsEventsFirstTry() {
		List<Integer> attempts = new CopyOnWriteArrayList<>();
		Consumer once = Consumer.builder("chat", "once").types("message.sent").run((context) -> {
			attempts.add(context.attempt());
			if (attempts.size() == 1) {
				throw new NonRetriableException("declined");
			}
			return null;
		});
		A2Server server = this.support.server(once);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("charge"));
		await().atMost(Duration.ofSeconds(20)).until(() -> server.deadLetters("chat", session.id(), "once", 10).size() == 1);
		assertThat(server.redrive("chat", session.id(), "once", 1, RedriveAction.RETRY)).isTrue();
		await().atMost(Duration.ofSeconds(20)).until(() -> attempts.size() == 2);
		assertThat(attempts).containsExactly(1, 2);
	}

	@Test
	void skipUnblocksTheLaneAndNonRetriableDeadLettersAtOnce() {
		List<Long> done = new CopyOnWriteArrayList<>();
		Consumer strict = Consumer.builder("chat", "strict")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				if (context.event().payload(MessageSent.class).text().equals("poison")) {
					throw new NonRetriableException("never");
				}
				done.add(context.event().index());
				return null;
			});
		A2Server server = this.support.server(strict);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("poison"), message("after"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), "strict", 10)).singleElement()
				.satisfies((letter) -> {
					assertThat(letter.failures()).isEqualTo(1);
					assertThat(letter.lane()).isEqualTo("projection");
					assertThat(letter.lastError()).isEqualTo("NonRetriableException: never");
				}));
		assertThatThrownBy(() -> session.consume("strict")).isInstanceOf(A2Exception.class)
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.CONSUMER_DEAD_LETTERED);
		assertThat(done).isEmpty();

		assertThat(server.redrive("chat", session.id(), "strict", 1, RedriveAction.SKIP)).isTrue();
		assertThat(session.consume("strict")).isEqualTo(2);
		assertThat(done).containsExactly(2L);
	}

	@Test
	void aRedriveOfAConsumerOrContractThatDoesNotExistIsNothingToRedriveAndMakesNoTimerOfItsName() {
		A2Server server = this.support.server(Consumer.builder("chat", "strict").run((context) -> null));
		// a name no instance ever ran is misspelt: it said "retry it from an instance that registers the consumer"
		assertThatThrownBy(() -> server.redrive("chat", "s-1", "made-up", 1, RedriveAction.RETRY))
			.isInstanceOf(A2Exception.class)
			.hasMessageStartingWith("no consumer named 'made-up' is known on contract 'chat'")
			.hasMessageContaining("strict")
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.NOT_FOUND);
		assertThat(server.redrive("chat", "s-1", "made-up", 1, RedriveAction.SKIP)).isFalse();
		assertThatThrownBy(() -> server.redrive("made-up", "s-1", "strict", 1, RedriveAction.SKIP))
			.isInstanceOf(A2Exception.class)
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.UNKNOWN_CONTRACT);
		assertThat(server.redrive("chat", "s-1", "strict", 1, RedriveAction.RETRY)).isFalse();
		// contract and consumer tag the a2.redrive timer: only names that exist may become tags
		TestObservationRegistryAssert.assertThat(this.support.observations)
			.hasNumberOfObservationsWithNameEqualTo(A2Observations.REDRIVE, 1)
			.forAllObservationsWithNameEqualTo(A2Observations.REDRIVE,
					(redrive) -> redrive.hasLowCardinalityKeyValue(A2Observations.CONTRACT, "chat")
						.hasLowCardinalityKeyValue(A2Observations.CONSUMER, "strict")
						// it found no dead letter: no retry is counted (found by the observability trial)
						.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "none"));
	}

	/**
	 * A run's state is as of its trigger, so that a re-run decides as the first attempt did; what arrived
	 * since is in the latest state (an order workflow's cancel appended while the run was under way).
	 */
	@Test
	void aRunReadsTheStateAsOfItsTriggerAndTheLatestStateWithWhatArrivedSince() throws Exception {
		CountDownLatch running = new CountDownLatch(1);
		CountDownLatch appended = new CountDownLatch(1);
		Map<String, Integer> read = new ConcurrentHashMap<>();
		Consumer reader = Consumer.builder("chat", "state-reader").types("message.sent").run((context) -> {
			if (context.event().index() == 1) {
				running.countDown();
				Latches.awaitIgnoringInterrupts(appended);
				read.put("trigger", context.session().state("count", Integer.class).state());
				read.put("latest", context.session().latestState("count", Integer.class).state());
				read.put("latest index", (int) context.session().latestState("count", Integer.class).index());
			}
			return null;
		});
		A2Server server = this.support.server(reader);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("first"));
		assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
		session.append(note("meanwhile"), note("and this"));
		appended.countDown();

		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(read).hasSize(3));
		assertThat(read).containsEntry("trigger", 1).containsEntry("latest", 3).containsEntry("latest index", 3);
	}

	@Test
	void aConsumerNameNoInstanceKnowsAndNoDeadLetterCarriesIsNotFoundRatherThanNothingDead() {
		A2Server server = this.support.server(Consumer.builder("chat", "listed-strict").run((context) -> {
			throw new NonRetriableException("never");
		}));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("poison"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), "listed-strict", 10)).hasSize(1));
		// the consumer exists and has nothing dead in that session: nothing to list
		assertThat(server.deadLetters("chat", A2TestSupport.newSessionId(), "listed-strict", 10)).isEmpty();
		// a misspelt name, with or without a contract or a session, is not "nothing dead"
		for (String contract : Arrays.asList("chat", null)) {
			for (String sessionId : Arrays.asList(session.id(), null)) {
				assertThatThrownBy(() -> server.deadLetters(contract, sessionId, "listed-stirct", 10))
					.isInstanceOf(A2Exception.class)
					.hasMessageContaining("'listed-stirct'")
					.hasMessageContaining("listed-strict")
					.extracting((ex) -> ((A2Exception) ex).code())
					.isEqualTo(ErrorCode.NOT_FOUND);
			}
		}
		// an instance that does not run the consumer (another's, or one removed from the application) lists
		// its dead letters, and nothing where it has none: the name is known from the instance that ran it
		A2Server elsewhere = this.support.server(Consumer.builder("chat", "listed-other").run((context) -> null));
		assertThat(elsewhere.deadLetters("chat", session.id(), "listed-strict", 10)).hasSize(1);
		assertThat(elsewhere.deadLetters(null, null, "listed-strict", 10)).hasSize(1);
		assertThat(elsewhere.deadLetters("chat", A2TestSupport.newSessionId(), "listed-strict", 10)).isEmpty();
		// a consumer not registered here has nothing to retry its dead letters: only a skip may discard them
		assertThatThrownBy(() -> elsewhere.redrive("chat", session.id(), "listed-strict", 1, RedriveAction.RETRY))
			.isInstanceOf(A2Exception.class)
			.hasMessageContaining("'listed-strict' is not registered")
			.hasMessageContaining("retry it from an instance that registers the consumer")
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.INVALID_PAYLOAD);
		assertThat(elsewhere.deadLetters("chat", session.id(), "listed-strict", 10)).hasSize(1);
		// and a reader that runs no consumer at all knows both names, and no third
		A2Server reader = this.support.server();
		assertThat(reader.deadLetters("chat", A2TestSupport.newSessionId(), "listed-other", 10)).isEmpty();
		assertThatThrownBy(() -> reader.deadLetters("chat", null, "listed-stirct", 10)).isInstanceOf(A2Exception.class)
			.hasMessageContaining("listed-other")
			.hasMessageContaining("listed-strict");
	}

	@Test
	void aSkipDiscardsTheDeadLettersOfAContractTheApplicationNoLongerRegisters() {
		A2Server server = this.support.server(Consumer.builder("chat", "strict").run((context) -> {
			throw new NonRetriableException("never");
		}));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("poison"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), "strict", 10)).hasSize(1));
		// the next deployment dropped the contract: the overview and the gauges still count its dead letter,
		// so an operator must be able to discard it, as the dead letters of a removed consumer
		A2Server without = A2Server.builder()
			.dataSource(this.support.dataSource)
			.contract(Contract.builder("shop").event("note", Note.class).build())
			.drainScheduling(DrainScheduling.MANUAL)
			.build();
		try {
			assertThat(without.deadLetters("chat", session.id(), "strict", 10)).hasSize(1);
			// no consumer would run a retry
			assertThatThrownBy(() -> without.redrive("chat", session.id(), "strict", 1, RedriveAction.RETRY))
				.isInstanceOf(A2Exception.class)
				.extracting((ex) -> ((A2Exception) ex).code())
				.isEqualTo(ErrorCode.UNKNOWN_CONTRACT);
			assertThat(without.deadLetters("chat", session.id(), "strict", 10)).hasSize(1);

			assertThat(without.redrive("chat", session.id(), "strict", 1, RedriveAction.SKIP)).isTrue();

			assertThat(server.deadLetters("chat", session.id(), "strict", 10)).isEmpty();
			// a name the store holds no dead letter of is not listed as "none dead": it is misspelt
			assertThatThrownBy(() -> without.deadLetters("chta", null, null, 10))
				.isInstanceOf(A2Exception.class)
				.extracting((ex) -> ((A2Exception) ex).code())
				.isEqualTo(ErrorCode.UNKNOWN_CONTRACT);
			// once discarded, the name is no contract of this application, as any name made up
			assertThatThrownBy(() -> without.redrive("chat", session.id(), "strict", 1, RedriveAction.SKIP))
				.isInstanceOf(A2Exception.class)
				.extracting((ex) -> ((A2Exception) ex).code())
				.isEqualTo(ErrorCode.UNKNOWN_CONTRACT);
		}
		finally {
			without.halt();
		}
	}

	@Test
	void aRedriveWithoutItsActionOrConsumerOrWithAnIndexBelowOneIsRefusedAndKeepsTheDeadLetter() {
		Consumer strict = Consumer.builder("chat", "strict").run((context) -> {
			throw new NonRetriableException("never");
		});
		A2Server server = this.support.server(strict);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("poison"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), "strict", 10)).hasSize(1));
		// an instance without the consumer (removed there) would discard its dead letters on a skip: a
		// missing action must not be taken for one
		A2Server without = this.support.server(Consumer.builder("chat", "other").run((context) -> null));
		for (A2Server instance : List.of(without, server)) {
			assertThatThrownBy(() -> instance.redrive("chat", session.id(), "strict", 1, null)).isInstanceOf(A2Exception.class)
				.hasMessageContaining("action")
				.extracting((ex) -> ((A2Exception) ex).code())
				.isEqualTo(ErrorCode.INVALID_PAYLOAD);
			assertThatThrownBy(() -> instance.redrive("chat", session.id(), null, 1, RedriveAction.SKIP))
				.isInstanceOf(A2Exception.class)
				.extracting((ex) -> ((A2Exception) ex).code())
				.isEqualTo(ErrorCode.INVALID_PAYLOAD);
			// as a history read's after=-1: no event has such an index, so it is a mistake, not a letter not found
			for (long index : new long[] { 0, -1 }) {
				assertThatThrownBy(() -> instance.redrive("chat", session.id(), "strict", index, RedriveAction.SKIP))
					.isInstanceOf(A2Exception.class)
					.hasMessage("index must be 1 or more (a session's events are numbered from 1), was " + index)
					.extracting((ex) -> ((A2Exception) ex).code())
					.isEqualTo(ErrorCode.INVALID_PAYLOAD);
			}
		}
		assertThat(server.deadLetters("chat", session.id(), "strict", 10)).hasSize(1);
	}

	@Test
	void abortOnAbortsARunningAttemptAndEndsItsUnit() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		AtomicReference<A2Exception> reason = new AtomicReference<>();
		AtomicInteger runs = new AtomicInteger();
		Consumer replier = Consumer.builder("chat", "replier")
			.types("message.sent")
			.abortOn("note", (trigger, arrived) -> arrived.payload(Note.class).text().equals("stop"))
			.run((context) -> {
				runs.incrementAndGet();
				started.countDown();
				TestContracts.blockUntilAborted();
				reason.set(context.signal().reason());
				return note("stopped");
			});
		A2Server server = this.support.server(replier);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("long question"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();

		session.append(note("not yet"));
		session.append(note("stop"));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(reason.get()).isNotNull();
			assertThat(this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ?", session.id())).isZero();
		});
		assertThat(reason.get().code()).isEqualTo(ErrorCode.ABORTED);
		assertThat(reason.get().getMessage()).contains("event 3 of type 'note'");
		this.support.clock.advance(Duration.ofHours(1));
		server.sweep();
		// what the aborted run returned committed with its unit's end, once
		assertThat(notes(session)).extracting((e) -> e.payload(Note.class).text()).containsExactly("not yet", "stop", "stopped");
		assertThat(runs.get()).isEqualTo(1);
		TestObservationRegistryAssert.assertThat(this.support.observations)
			.hasAnObservation((observation) -> observation.hasNameEqualTo(A2Observations.EVENT)
				.hasLowCardinalityKeyValue(A2Observations.CONSUMER, "replier")
				.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "aborted"));
	}

	@Test
	void anAbortOnEventAppendedThroughAnotherInstanceAbortsAtTheNextHeartbeat() throws Exception {
		BlockedReplier replier = new BlockedReplier();
		A2Server running = this.support.server(replier.consumer);
		A2Server elsewhere = this.support.server(DrainSettings.DEFAULTS, replier.consumer);
		Session session = running.session("chat", A2TestSupport.newSessionId());
		session.append(message("question"));
		assertThat(replier.started()).isTrue();
		elsewhere.session("chat", session.id()).append(note("stop"));
		running.drainer().heartbeat();
		await().atMost(Duration.ofSeconds(20)).until(() -> replier.reason() != null);
		assertThat(replier.reason().code()).isEqualTo(ErrorCode.ABORTED);
	}

	@Test
	void clearAbortsRunningAttemptsAndItsPendingUnitsNeverRun() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		AtomicReference<A2Exception> reason = new AtomicReference<>();
		List<String> ran = new CopyOnWriteArrayList<>();
		Consumer slow = Consumer.builder("chat", "slow")
			.types("message.sent")
			.lane(Lane.keyed((input) -> "one"))
			.run((context) -> {
				ran.add(context.event().payload(MessageSent.class).text());
				started.countDown();
				if (context.event().index() == 1) {
					TestContracts.blockUntilAborted();
					reason.set(context.signal().reason());
				}
				return note("reply to " + context.event().index());
			});
		A2Server server = this.support.server(slow);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("first"), message("second"), message("third"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();

		long marker = session.clear();
		await().atMost(Duration.ofSeconds(20)).until(() -> reason.get() != null);
		assertThat(reason.get().code()).isEqualTo(ErrorCode.ABORTED);
		session.append(message("after the clear"));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(ran).contains("after the clear"));
		this.support.clock.advance(Duration.ofHours(1));
		server.sweep();
		await().atMost(Duration.ofSeconds(20)).until(() -> notes(session).size() == 1);
		assertThat(ran).containsExactly("first", "after the clear");
		assertThat(notes(session)).singleElement().satisfies((n) -> assertThat(n.payload(Note.class).text()).isEqualTo("reply to " + (marker + 1)));
	}

	@Test
	void consumeReadsYourWritesAndRefusesSelfAndCycles() {
		Map<String, Integer> counts = new ConcurrentHashMap<>();
		AtomicReference<Throwable> cycle = new AtomicReference<>();
		Consumer counter = Consumer.builder("chat", "counter").types("message.sent").lane(Lane.fixed("count")).run((context) -> {
			counts.merge(context.session().id(), 1, Integer::sum);
			return null;
		});
		Consumer selfish = Consumer.builder("chat", "selfish").types("note").lane(Lane.fixed("self")).run((context) -> {
			if (context.event().payload(Note.class).text().equals("self")) {
				consumeOrRecordRefusal(context, "selfish", cycle);
			}
			return null;
		});
		A2Server server = this.support.server(counter, selfish);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		for (int i = 0; i < 5; i++) {
			session.append(message("m" + i));
			assertThat(session.consume("counter")).isGreaterThanOrEqualTo(i + 1);
			assertThat(counts.get(session.id())).isEqualTo(i + 1);
		}
		assertThat(session.consume("counter", 2)).isGreaterThanOrEqualTo(2);
		assertThatThrownBy(() -> session.consume("nope")).isInstanceOf(IllegalArgumentException.class);

		session.append(note("self"));
		await().atMost(Duration.ofSeconds(20)).until(() -> cycle.get() != null);
		assertThat(cycle.get()).hasMessageContaining("may not consume itself");
	}

	@Test
	void consumeThroughAnIndexPastTheHeadAnswersTheHeadItReached() {
		List<String> seen = new CopyOnWriteArrayList<>();
		A2Server server = this.support.server(projection(seen));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("a"), message("b"));

		assertThat(session.consume("projection", 1000)).isEqualTo(2);
		assertThat(seen).containsExactly("1 of " + session.id(), "2 of " + session.id());
		assertThat(server.session("chat", A2TestSupport.newSessionId()).consume("projection", 5)).isZero();
	}

	@Test
	void consumeInTheTransactionThatAppendedFailsAtOnceAndWorksOnceItCommits() {
		List<String> seen = new CopyOnWriteArrayList<>();
		A2Server server = this.support.server(projection(seen));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		Session other = server.session("chat", A2TestSupport.newSessionId());
		other.append(message("elsewhere"));
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.support.dataSource));
		AtomicReference<Throwable> refusal = new AtomicReference<>();
		AtomicReference<Long> afterCommit = new AtomicReference<>();

		// an application service: @Transactional { append; consume to read the projection; }
		// (bounded only so that a regression fails instead of hanging the build)
		assertTimeoutPreemptively(Duration.ofSeconds(30), () -> transactions.executeWithoutResult((status) -> {
			session.append(message("a"));
			refusal.set(failureOf(() -> session.consume("projection")));
			// a session the transaction did not write is consumed as ever
			assertThat(other.consume("projection")).isEqualTo(1);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
				@Override
				public void afterCommit() {
					afterCommit.set(session.consume("projection"));
				}
			});
		}));

		assertThat(refusal.get()).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("inside a transaction that wrote to session '" + session.id() + "' and has not committed")
			.hasMessageContaining("Call consume after the transaction commits");
		assertThat(afterCommit.get()).as("consume in an afterCommit callback").isEqualTo(1);
		assertThat(session.consume("projection")).isEqualTo(1);
		assertThat(seen).containsExactly("1 of " + other.id(), "1 of " + session.id());
	}

	/** A projection that notes each event it runs for, as "index of session". */
	private static Consumer projection(List<String> seen) {
		return Consumer.builder("chat", "projection").types("message.sent").lane(Lane.fixed("projection")).run((context) -> {
			seen.add(context.event().index() + " of " + context.session().id());
			return null;
		});
	}

	@Test
	void consumersWaitingOnEachOtherFailAtOnce() {
		AtomicReference<Throwable> cycle = new AtomicReference<>();
		CountDownLatch aWaiting = new CountDownLatch(1);
		// whichever of the two closes the cycle is refused; the test cannot tell which comes second
		Consumer a = Consumer.builder("chat", "a").types("message.sent").lane(Lane.fixed("a")).run((context) -> {
			aWaiting.countDown();
			consumeOrRecordRefusal(context, "b", cycle);
			return null;
		});
		Consumer b = Consumer.builder("chat", "b").types("note").lane(Lane.fixed("b")).run((context) -> {
			aWaiting.await(20, TimeUnit.SECONDS);
			consumeOrRecordRefusal(context, "a", cycle);
			return null;
		});
		A2Server server = this.support.server(a, b);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(note("b first"), message("then a"));
		await().atMost(Duration.ofSeconds(20)).until(() -> cycle.get() != null);
		assertThat(cycle.get()).hasMessageContaining("consumers would wait on each other for ever")
			.hasMessageFindingMatch("chat/.+/(a|b) → chat/.+/(a|b) → chat/.+/(a|b)");
	}

	@Test
	void scheduledAppendIsDeliveredOnceAcrossInstancesAndAClearCancelsIt() {
		Consumer scheduler = Consumer.builder("chat", "scheduler").types("message.sent").run((context) -> {
			context.session().schedule("follow-up", Duration.ofMinutes(5), note("five minutes later"));
			context.session().schedule("follow-up", Duration.ofMinutes(5), note("five minutes later"));
			return null;
		});
		A2Server first = this.support.server(scheduler);
		A2Server second = this.support.server(scheduler);
		Session kept = first.session("chat", A2TestSupport.newSessionId());
		Session cleared = first.session("chat", A2TestSupport.newSessionId());
		kept.append(message("hello"));
		cleared.append(message("hello"));
		await().atMost(Duration.ofSeconds(20)).until(() -> this.support.count("SELECT count(*) FROM a2_schedule WHERE session_id IN (?, ?)", kept.id(), cleared.id()) == 2);
		cleared.clear();
		first.sweep();
		assertThat(notes(kept)).isEmpty();

		this.support.clock.advance(Duration.ofMinutes(5));
		Thread sweeper = new Thread(second::sweep);
		sweeper.start();
		first.sweep();
		await().atMost(Duration.ofSeconds(20)).until(() -> !sweeper.isAlive());
		assertThat(notes(kept)).extracting((e) -> e.payload(Note.class).text()).containsExactly("five minutes later");
		assertThat(notes(cleared)).isEmpty();
		assertThat(this.support.count("SELECT count(*) FROM a2_schedule")).isZero();
	}

	@Test
	void anApplicationWithoutConsumersGetsWhatItSchedulesDelivered() {
		// an application that has no consumer (yet) and schedules from its own code
		A2Server server = this.support.server();
		Session reminded = server.session("chat", A2TestSupport.newSessionId());
		Session idle = server.session("chat", A2TestSupport.newSessionId());
		reminded.append(message("hello"));
		idle.append(message("hello"));
		reminded.schedule("reminder", this.support.clock.instant().plus(Duration.ofMinutes(1)), note("ping"));
		idle.scheduleClear("expire", this.support.clock.instant().plus(Duration.ofMinutes(30)), 1L);

		this.support.clock.advance(Duration.ofMinutes(2));
		server.sweep();
		assertThat(reminded.history(0, 10).events()).extracting(Event::type).containsExactly("message.sent", "note");
		assertThat(idle.history(0, 10).events()).hasSize(1);

		this.support.clock.advance(Duration.ofHours(1));
		server.sweep();
		assertThat(idle.history(0, 10).events()).as("events after the scheduled clear was due").isEmpty();
		assertThat(this.support.count("SELECT count(*) FROM a2_schedule")).isZero();
	}

	public record SignedNote(@NotBlank String text, @NotBlank String by) {
	}

	/**
	 * §7: each task is delivered once due. A reminder the previous deployment scheduled, whose note no
	 * longer binds to the contract as deployed now, and a task of another application's contract on
	 * the same database are the oldest due; the tasks after them are delivered all the same, and
	 * neither of those two is lost.
	 */
	@Test
	void aScheduledTaskThatCannotBeDeliveredDoesNotHoldUpTheOthers() {
		Instant now = this.support.clock.instant();
		A2Server previous = this.support.server();
		Session old = previous.session("chat", A2TestSupport.newSessionId());
		old.schedule("reminder", now.plus(Duration.ofMinutes(1)), note("from before notes were signed"));
		Contract billing = Contract.builder("billing").event("note", Note.class).build();
		A2Server other = A2Server.builder().dataSource(this.support.dataSource).contract(billing).clock(this.support.clock).build();
		Session invoice = other.session("billing", A2TestSupport.newSessionId());
		invoice.schedule("dunning", now.plus(Duration.ofMinutes(1)), note("pay up"));
		Session fresh = previous.session("chat", A2TestSupport.newSessionId());
		fresh.schedule("greeting", now.plus(Duration.ofMinutes(2)), message("hello"));

		Contract signedNotes = Contract.builder("chat")
			.event("message.sent", MessageSent.class)
			.event("note", SignedNote.class)
			.build();
		A2Server current = A2Server.builder()
			.dataSource(this.support.dataSource)
			.contract(signedNotes)
			.clock(this.support.clock)
			.payloadValidator(new BeanValidationPayloadValidator(A2TestSupport.validator()))
			.build();
		this.support.clock.advance(Duration.ofMinutes(3));
		try (LogCapture log = new LogCapture()) {
			current.sweep();
			assertThat(fresh.history(0, 10).events()).extracting(Event::type).containsExactly("message.sent");
			assertThat(old.history(0, 10).events()).isEmpty();
			assertThat(log.lines("Could not deliver scheduled task")).hasSize(1)
				.allSatisfy((line) -> assertThat(line).contains(old.id()));
		}

		other.sweep();
		assertThat(invoice.history(0, 10).events()).extracting(Event::type).containsExactly("note");
		// the failed task is tried again a minute later, by an instance that can deliver it
		this.support.clock.advance(Duration.ofMinutes(1));
		previous.sweep();
		assertThat(old.history(0, 10).events()).extracting((e) -> e.payload(Note.class).text())
			.containsExactly("from before notes were signed");
		assertThat(this.support.count("SELECT count(*) FROM a2_schedule")).isZero();
	}

	@Test
	void aClearThatMeetsTheDeliveryOfItsSessionsScheduledAppendCancelsItAndBothGoThrough() throws Exception {
		// on Citus the waits are on a worker, where the coordinator does not see who waits for whom
		assumeFalse(A2TestSupport.onCitus(this.support.dataSource), "row locks seen on one PostgreSQL");
		A2Server server = this.support.manualServer(Consumer.builder("chat", "idle").types("note").run((context) -> null));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("hello"));
		session.schedule("follow-up", this.support.clock.instant(), note("from before the clear"));
		// an append of the session in flight: the clear, then the delivery of the task, queue behind it
		clearThenDeliveryBehind(server, session, "SELECT 1 FROM a2_session WHERE session_id = '" + session.id() + "' FOR UPDATE",
				2);
	}

	@Test
	void aClearOfASessionNeverWrittenThatMeetsTheDeliveryOfItsTaskCancelsItAndBothGoThrough() throws Exception {
		assumeFalse(A2TestSupport.onCitus(this.support.dataSource), "row locks seen on one PostgreSQL");
		A2Server server = this.support.manualServer(Consumer.builder("chat", "idle").types("note").run((context) -> null));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.schedule("first-words", this.support.clock.instant(), note("scheduled before anything was said"));
		// a cursor of the session another transaction holds (say, a finish), for the clear to wait on once it
		// has created the session's row
		this.support.jdbc()
			.sql("INSERT INTO a2_cursor (contract, session_id, consumer, position, target) VALUES ('chat', ?, 'audit', 0, 0)")
			.param(session.id())
			.update();
		// the delivery of the task then meets the session's row the clear created and has not committed
		clearThenDeliveryBehind(server, session, "SELECT 1 FROM a2_cursor WHERE session_id = '" + session.id() + "' FOR UPDATE",
				1);
	}

	/**
	 * Lines a clear of the session, then a sweep that delivers its due task, up behind a transaction of
	 * the test's holding a row, lets them go, and checks that both went through and the task was
	 * cancelled.
	 */
	private void clearThenDeliveryBehind(A2Server server, Session session, String holdRow, long marker) throws Exception {
		try (LogCapture log = new LogCapture(); HeldRows held = HeldRows.hold(this.support.dataSource, holdRow)) {
			CompletableFuture<Long> clear = CompletableFuture.supplyAsync(session::clear, AtOnce.threads());
			held.awaitWaiting(1);
			CompletableFuture<Integer> sweep = CompletableFuture.supplyAsync(server::sweep, AtOnce.threads());
			held.awaitWaiting(2);
			held.release();
			assertThat(clear.get(1, TimeUnit.MINUTES)).isEqualTo(marker);
			sweep.get(1, TimeUnit.MINUTES);
			// a delivery that failed (PostgreSQL breaking a deadlock with the clear) is only logged
			assertThat(log.lines("Could not deliver a scheduled task")).isEmpty();
		}
		assertThat(session.history(0, 10).events()).as("the task the clear cancelled").isEmpty();
		assertThat(session.history(0, 10).head()).isEqualTo(marker);
		assertThat(this.support.count("SELECT count(*) FROM a2_schedule")).isZero();
	}

	@Test
	void scheduledClearHappensOnlyIfTheSessionStayedIdle() {
		A2Server server = this.support.server(Consumer.builder("chat", "idle").types("note").run((context) -> null));
		Session idle = server.session("chat", A2TestSupport.newSessionId());
		Session busy = server.session("chat", A2TestSupport.newSessionId());
		idle.append(message("a"));
		busy.append(message("a"));
		idle.scheduleClear("expire", this.support.clock.instant().plus(Duration.ofMinutes(30)), 1L);
		busy.scheduleClear("expire", this.support.clock.instant().plus(Duration.ofMinutes(30)), 1L);
		busy.append(message("b"));

		this.support.clock.advance(Duration.ofMinutes(31));
		server.sweep();
		assertThat(idle.history(0, 10).events()).isEmpty();
		assertThat(idle.history(0, 10).head()).isEqualTo(2);
		assertThat(busy.history(0, 10).events()).hasSize(2);
	}

	@Test
	void whatARunOfAnEventFromBeforeAClearSchedulesAfterItIsNeverDelivered() throws Exception {
		Session session = clearWhileARunGoesOn((late) -> {
			late.scheduleClear("expire", Duration.ZERO, null);
			late.schedule("follow-up", Duration.ZERO, note("from before the clear"));
		});
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			session.server().sweep();
			return this.support.count("SELECT count(*) FROM a2_schedule WHERE session_id = ?", session.id()) == 0;
		});
		// the clear cancelled the tasks of the events before it, scheduled before it or after
		assertThat(session.history(0, 10).head()).as("no second clear, no follow-up").isEqualTo(2);
		assertThat(session.history(0, 10).events()).isEmpty();
	}

	@Test
	void aRunOfAnEventFromBeforeAClearWritesNothingAfterIt() throws Exception {
		CompletableFuture<Throwable> appended = new CompletableFuture<>();
		CompletableFuture<Throwable> clearedAgain = new CompletableFuture<>();
		// a reply still streaming when the user starts the conversation over
		Session session = clearWhileARunGoesOn((late) -> {
			appended.complete(failureOf(() -> late.append("late", note("the rest of an answer to a question gone"))));
			clearedAgain.complete(failureOf(late::clear));
		});
		assertThat(appended.get()).isInstanceOfSatisfying(A2Exception.class,
				(ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.ABORTED));
		assertThat(clearedAgain.get()).isInstanceOfSatisfying(A2Exception.class,
				(ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.ABORTED));
		assertThat(session.history(0, 10).head()).isEqualTo(2);
		assertThat(session.history(0, 10).events()).isEmpty();
		// a run of an event after the clear writes as ever: its note (4), then its clear's marker (5)
		session.append(message("a new question"));
		await().atMost(Duration.ofSeconds(20)).until(() -> session.history(0, 10).head() == 5);
	}

	/** What a run writes after the clear it did not look at. */
	private interface AfterTheClear {

		void write(RunSession session);

	}

	/**
	 * Appends a message to a new session whose consumer's run waits, ignoring its abort as code that
	 * does not look at its signal would, until the test has cleared the session (its marker is 2); the
	 * run then does {@code after}, as every later run does at once. Answers the session once the first
	 * run has done it.
	 */
	private Session clearWhileARunGoesOn(AfterTheClear after) throws Exception {
		CountDownLatch running = new CountDownLatch(1);
		CountDownLatch cleared = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(1);
		A2Server server = this.support.server(Consumer.builder("chat", "late").types("message.sent").run((context) -> {
			running.countDown();
			Latches.awaitIgnoringInterrupts(cleared);
			try {
				after.write(context.session());
			}
			finally {
				done.countDown();
			}
			return null;
		}));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("hello"));
		assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
		assertThat(session.clear()).isEqualTo(2);
		cleared.countDown();
		assertThat(done.await(20, TimeUnit.SECONDS)).isTrue();
		return session;
	}

	/** What {@code write} threw, or {@code null}. */
	private static @Nullable Throwable failureOf(Runnable write) {
		try {
			write.run();
			return null;
		}
		catch (RuntimeException ex) {
			return ex;
		}
	}

	/** A handler that counts the runs going on at once, keeping the most it saw. */
	private static Consumer.Handler counted(AtomicInteger running, AtomicInteger most, List<String> ran) {
		return (context) -> {
			most.accumulateAndGet(running.incrementAndGet(), Math::max);
			ran.add(context.event().id());
			running.decrementAndGet();
			return null;
		};
	}

	/** Consumes from a run; a refusal (self or cycle) is kept for the test instead of failing the run. */
	private static void consumeOrRecordRefusal(ConsumerContext context, String consumer, AtomicReference<Throwable> refusal) {
		try {
			context.session().consume(consumer);
		}
		catch (IllegalStateException ex) {
			refusal.set(ex);
		}
	}

	private List<Event> notes(Session session) {
		return session.history(0, 1000).events().stream().filter((e) -> e.type().equals("note")).toList();
	}

	private long failures(String session, String consumer) {
		return this.support.count("""
				SELECT coalesce(max(failures), 0) FROM (
				  SELECT failures FROM a2_work WHERE session_id = ? AND consumer = ?
				  UNION ALL SELECT failures FROM a2_cursor WHERE session_id = ? AND consumer = ?) f""", session, consumer, session,
				consumer);
	}

	private Instant dueAt(String session, String consumer, long index) {
		return this.support.jdbc()
			.sql("SELECT due_at FROM a2_work WHERE session_id = ? AND consumer = ? AND idx = ?")
			.params(session, consumer, index)
			.query(OffsetDateTime.class)
			.single()
			.toInstant();
	}

}
