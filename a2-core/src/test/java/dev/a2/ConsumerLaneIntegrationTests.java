package dev.a2;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.a2.TestContracts.MessageSent;
import dev.a2.store.DeadLetter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.a2.TestContracts.message;
import static dev.a2.TestContracts.note;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What a consumer author relies on (spec §5, §5.2, §6.4): lanes in order across back-offs, failures
 * counted per event, backfill after a clear and for consume, types narrowed between deployments.
 */
class ConsumerLaneIntegrationTests {

	private final DrainTestSupport support = new DrainTestSupport("lanes");

	@AfterEach
	void halt() {
		this.support.close();
	}

	/**
	 * §6.4: a head is dead-lettered after max-failures failures of its own. Each event fails exactly
	 * once; with max-failures 3 none is dead-lettered (the count once followed the cursor past them).
	 */
	@Test
	void aLaneKeyThatThrowsFailsTheAppendWithAnErrorNamingItsConsumerAndStoresNothing() {
		Consumer perAuthor = Consumer.builder("chat", "per-author")
			.types("message.sent", "note")
			.lane(Lane.keyed((input) -> ((MessageSent) input.payload()).text()))
			.run((context) -> null);
		A2Server server = this.support.server(perAuthor);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("hello"));

		assertThatThrownBy(() -> session.append(message("again"), note("a note")))
			.hasMessageContaining("The lane key of consumer 'per-author' failed for an event of type 'note'")
			.hasRootCauseInstanceOf(ClassCastException.class);
		assertThat(session.history(0, 10).events()).extracting(Event::type).containsExactly("message.sent");
	}

	@Test
	void aCursorEventThatFailsOnceIsNotDeadLetteredForTheFailuresOfEarlierEvents() {
		Set<Long> failedOnce = ConcurrentHashMap.newKeySet();
		List<Long> done = new CopyOnWriteArrayList<>();
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				if (failedOnce.add(context.event().index())) {
					throw new IllegalStateException("first try of " + context.event().index() + " fails");
				}
				done.add(context.event().index());
				return null;
			});
		A2Server server = this.support.server(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE)
			.withRetry(Duration.ofSeconds(1), Duration.ofMinutes(5))
			.withMaxFailures(3), projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("1"), message("2"), message("3"));

		for (int round = 0; round < 10; round++) {
			assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).isTrue();
			if (done.size() == 3 || !server.deadLetters("chat", session.id(), null, 10).isEmpty()) {
				break;
			}
			this.support.clock.advance(Duration.ofHours(1));
			server.sweep();
		}
		List<DeadLetter> dead = server.deadLetters("chat", session.id(), null, 10);
		assertThat(dead).as("no event failed more than once, yet: %s", dead).isEmpty();
		assertThat(done).containsExactly(1L, 2L, 3L);
	}

	/**
	 * §5.1: a run's attempt is its event's. An attempt of a cursor that retries its head and goes on
	 * to the events after it runs those on their first try (a reply would otherwise say it restarted).
	 */
	@Test
	void aCursorAttemptThatRetriesItsHeadRunsTheEventsAfterItAsTheirFirstTry() {
		Set<Long> failedOnce = ConcurrentHashMap.newKeySet();
		Map<Long, Integer> attempts = new ConcurrentHashMap<>();
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				if (context.event().index() == 1 && failedOnce.add(1L)) {
					throw new IllegalStateException("the first try of 1 fails");
				}
				attempts.put(context.event().index(), context.attempt());
				return null;
			});
		A2Server server = this.support.server(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE)
			.withRetry(Duration.ofSeconds(1), Duration.ofMinutes(5)), projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("1"), message("2"), message("3"));

		for (int round = 0; round < 10 && attempts.size() < 3; round++) {
			assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).isTrue();
			this.support.clock.advance(Duration.ofHours(1));
			server.sweep();
		}
		assertThat(attempts).containsExactlyInAnyOrderEntriesOf(Map.of(1L, 2, 2L, 1, 3L, 1));
	}

	/**
	 * §6.4: an attempt that keeps dying is dead-lettered when a takeover would exceed the attempt
	 * limit. Each event of a cursor fails once, then the next event's first attempt dies with its
	 * instance: that event died once, and is taken over, not dead-lettered for the attempts of the
	 * events before it.
	 */
	@Test
	void aCursorEventWhoseFirstAttemptDiesIsTakenOverNotDeadLetteredForTheAttemptsOfEarlierEvents() throws Exception {
		Set<Long> failedOnce = ConcurrentHashMap.newKeySet();
		List<Long> done = new CopyOnWriteArrayList<>();
		CountDownLatch dying = new CountDownLatch(1);
		AtomicBoolean dies = new AtomicBoolean(true);
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				long index = context.event().index();
				if (index < 4 && failedOnce.add(index)) {
					throw new IllegalStateException("first try of " + index + " fails");
				}
				if (index == 4 && dies.get()) {
					dying.countDown();
					TestContracts.blockUntilAborted();
					return null;
				}
				done.add(index);
				return null;
			});
		DrainSettings settings = DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE)
			.withRetry(Duration.ofSeconds(1), Duration.ofMinutes(5))
			.withMaxFailures(3);
		A2Server dyingServer = this.support.server(settings, projection);
		Session session = dyingServer.session("chat", A2TestSupport.newSessionId());
		session.append(message("1"), message("2"), message("3"), message("4"));
		for (int round = 0; round < 10; round++) {
			// each attempt ends in a failure (idle) until one reaches event 4; the clock must not move past
			// that one's lease, which would let this instance take it over itself
			await().atMost(Duration.ofSeconds(20))
				.until(() -> dying.getCount() == 0 || dyingServer.drainer().activity().idle());
			if (dying.getCount() == 0) {
				break;
			}
			this.support.clock.advance(Duration.ofHours(1));
			dyingServer.sweep();
		}
		assertThat(dying.await(20, TimeUnit.SECONDS)).isTrue();
		dyingServer.halt();
		dies.set(false);

		A2Server survivor = this.support.server(settings, projection);
		survivor.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(survivor.deadLetters("chat", session.id(), null, 10)).isEmpty();
			// event 3 ran in the attempt that died too, which committed nothing: at least once
			assertThat(done).containsSubsequence(1L, 2L, 3L, 4L).endsWith(4L);
		});
	}

	/**
	 * §6.4: a failed attempt records its error text. An error whose message holds what PostgreSQL
	 * cannot store (a NUL from a device's or a remote service's answer) is still recorded, with that
	 * character replaced, and its back-off and dead letter follow as for any failure.
	 */
	@Test
	void aFailureWhoseMessageHoldsANulIsDeadLetteredWithItsErrorText() {
		Consumer device = Consumer.builder("chat", "device").types("message.sent").run((context) -> {
			throw new NonRetriableException("the device answered 'ok\u0000\u0000' to " + context.event().index());
		});
		A2Server server = this.support.server(device);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("ping"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), "device", 10)).singleElement()
				.satisfies((dead) -> assertThat(dead.lastError())
					.isEqualTo("NonRetriableException: the device answered 'ok\uFFFD\uFFFD' to 1")));
	}

	/**
	 * A dead letter of a fixed lane holds up the events behind it, as one of a keyed lane does: they are
	 * pending, and the oldest pending age runs from the first of them, so an alert on that age fires for a
	 * stuck fixed lane too (it once showed pending 0 and no age, and only lag told).
	 */
	@Test
	void theEventsBehindADeadLetterOfAFixedLaneArePendingSinceTheFirstOfThemWasAppended() {
		Consumer stuck = Consumer.builder("chat", "stuck-projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				if (context.event().payload(MessageSent.class).text().equals("poison")) {
					throw new NonRetriableException("cannot project poison");
				}
				return null;
			});
		A2Server server = this.support.server(stuck);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("poison"));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> !server.deadLetters("chat", session.id(), "stuck-projection", 10).isEmpty());
		Instant behindAppended = session.append(message("behind")).get(0).createdAt();
		session.append(message("behind too"));

		assertThat(server.pendingWork()).filteredOn((work) -> work.consumer().equals("stuck-projection"))
			.singleElement().satisfies((work) -> {
				assertThat(work.dead()).isEqualTo(1);
				assertThat(work.pending()).isEqualTo(1);
				assertThat(work.lag()).isEqualTo(3);
				assertThat(work.oldestDueAt()).isEqualTo(behindAppended);
			});

		assertThat(server.redrive("chat", session.id(), "stuck-projection", 1, RedriveAction.SKIP)).isTrue();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(server.pendingWork())
			.noneMatch((work) -> work.consumer().equals("stuck-projection") && (work.pending() > 0 || work.dead() > 0)));
	}

	/** A note as a later deployment reads it: it refuses a text the earlier one stored. */
	record StrictNote(String text) {
		StrictNote {
			if (text.equals("poison")) {
				throw new IllegalArgumentException("a note may not say 'poison' any more");
			}
		}
	}

	/**
	 * §6.4: the head that fails is the one dead-lettered, and the events before it complete. A stored
	 * event that the current deployment's payload type cannot read (a poison event) fails its cursor
	 * at that event: the dead letter names it, and skipping it skips it alone.
	 */
	@Test
	void aCursorEventThatCannotBeReadIsTheOneDeadLetteredAndTheEventsBeforeItComplete() {
		List<String> done = new CopyOnWriteArrayList<>();
		poisonReadBy(Consumer.builder("chat", "notes").types("note").lane(Lane.fixed("notes")).backfill(true).run((context) -> {
			done.add(context.event().payload(StrictNote.class).text());
			return null;
		}), done);
	}

	/** The same for a consumer that takes batches: the batch runs one event at a time and fails at the poison. */
	@Test
	void aBatchEventThatCannotBeReadIsTheOneDeadLetteredAndTheEventsBeforeItComplete() {
		List<String> done = new CopyOnWriteArrayList<>();
		poisonReadBy(Consumer.builder("chat", "notes").types("note").lane(Lane.fixed("notes")).backfill(true).runBatch((batch) -> {
			batch.forEach((context) -> done.add(context.event().payload(StrictNote.class).text()));
			return null;
		}), done);
	}

	/**
	 * Notes written by an earlier deployment, one of which the consumer's deployment cannot read, are
	 * backfilled by {@code consumer}: it completes the ones before, dead-letters the poison, and a skip
	 * of it lets the one after run.
	 */
	private void poisonReadBy(Consumer consumer, List<String> done) {
		Session written = this.support.server().session("chat", A2TestSupport.newSessionId());
		written.append(note("1"), note("2"), note("poison"), note("4"));
		A2Server server = A2Server.builder()
			.dataSource(this.support.dataSource)
			.contract(Contract.builder("chat").event("message.sent", MessageSent.class).event("note", StrictNote.class).build())
			.clock(this.support.clock)
			.drain(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withMaxFailures(2))
			.consumer(consumer)
			.build();
		try {
			for (int round = 0; round < 5 && server.deadLetters("chat", written.id(), null, 10).isEmpty(); round++) {
				server.sweep();
				assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).isTrue();
				this.support.clock.advance(Duration.ofHours(1));
			}
			assertThat(server.deadLetters("chat", written.id(), null, 10)).singleElement().satisfies((dead) -> {
				assertThat(dead.index()).isEqualTo(3);
				assertThat(dead.lastError()).contains("poison");
			});
			assertThat(done).containsExactly("1", "2");

			assertThat(server.redrive("chat", written.id(), "notes", 3, RedriveAction.SKIP)).isTrue();
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(done).containsExactly("1", "2", "4"));
		}
		finally {
			server.halt();
		}
	}

	/**
	 * §5 backfill with §4 clear: a backfilling cursor starts after the session's latest clear, whether
	 * the sweep or an append created it (an append's once started at 0 and ran what the clear hid).
	 */
	@Test
	void aBackfillCursorCreatedByAnAppendDoesNotRunEventsBeforeTheLatestClear() {
		A2Server before = this.support.server();
		Session swept = before.session("chat", A2TestSupport.newSessionId());
		swept.append(message("old 1"), message("old 2"));
		swept.clear();
		swept.append(message("new"));
		Session appended = before.session("chat", A2TestSupport.newSessionId());
		appended.append(message("old 1"), message("old 2"));
		appended.clear();

		Map<String, List<String>> seen = new ConcurrentHashMap<>();
		Consumer backfill = Consumer.builder("chat", "backfill")
			.types("message.sent")
			.lane(Lane.fixed("all"))
			.backfill(true)
			.run((context) -> {
				seen.computeIfAbsent(context.session().id(), (k) -> new CopyOnWriteArrayList<>())
					.add(context.event().payload(MessageSent.class).text());
				return null;
			});
		A2Server server = this.support.server(backfill);
		// the sweep creates the cursor of the session written before the consumer
		server.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(seen.get(swept.id())).isNotNull());
		// an append creates the cursor of the other one
		server.session("chat", appended.id()).append(message("new"));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(seen.get(appended.id())).contains("new"));
		assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).isTrue();

		assertThat(seen.get(swept.id())).as("sweep-created backfill cursor").containsExactly("new");
		assertThat(seen.get(appended.id())).as("append-created backfill cursor").containsExactly("new");
	}

	/**
	 * §5.2: consume drives the cursor through the head before it answers, also for a backfilling
	 * consumer whose cursor the sweep has not created yet in a session written before it.
	 */
	@Test
	void consumeOfABackfillingConsumerRunsTheSessionsEarlierEventsBeforeItAnswers() {
		A2Server before = this.support.server();
		Session old = before.session("chat", A2TestSupport.newSessionId());
		old.append(message("1"), message("2"));

		List<Long> seen = new CopyOnWriteArrayList<>();
		Consumer backfill = Consumer.builder("chat", "backfill")
			.types("message.sent")
			.lane(Lane.fixed("all"))
			.backfill(true)
			.run((context) -> {
				seen.add(context.event().index());
				return null;
			});
		A2Server server = this.support.server(backfill);
		long reached = server.session("chat", old.id()).consume("backfill");

		assertThat(reached).isEqualTo(2);
		assertThat(seen).as("events the consumer ran before consume answered %d", reached).containsExactly(1L, 2L);
	}

	/**
	 * §5.2: consume through an index answers once the cursor is past it. A user's reaction (a type the
	 * projection does not take) is consumed through, though the projection is dead-lettered on a later
	 * message somebody else sent: that head is not in what was asked for.
	 */
	@Test
	void consumeThroughAnIndexIgnoresADeadLetterOnALaterEvent() {
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.run((context) -> {
				if (context.event().payload(MessageSent.class).text().equals("poison")) {
					throw new NonRetriableException("cannot project it");
				}
				return null;
			});
		A2Server server = this.support.server(projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("hello"));
		long reaction = session.append(note("thumbs up")).get(0).index();
		session.append(message("poison"));
		await().atMost(Duration.ofSeconds(20)).until(() -> !server.deadLetters("chat", session.id(), "projection", 10).isEmpty());

		assertThat(session.consume("projection", reaction)).isEqualTo(reaction);
		assertThatThrownBy(() -> session.consume("projection")).isInstanceOf(A2Exception.class)
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.CONSUMER_DEAD_LETTERED);
	}

	/**
	 * §5 types: a consumer takes the event types it lists. An instance of the previous deployment, whose
	 * consumer took notes too, created a cursor; the new deployment's consumer, which no longer takes
	 * notes, is not handed the note.
	 */
	@Test
	void aFixedLaneConsumerWhoseTypesNarrowedIsNotGivenTheTypesItNoLongerTakes() {
		assertThat(typesRunAfterNarrowing(Lane.fixed("projection"))).containsExactly("message.sent");
	}

	/** The same for an independent consumer's units created by the previous deployment. */
	@Test
	void anIndependentConsumerWhoseTypesNarrowedIsNotGivenTheTypesItNoLongerTakes() {
		assertThat(typesRunAfterNarrowing(Lane.independent())).containsExactly("message.sent");
	}

	/**
	 * The types the current deployment's consumer ran, after the previous one's (which took notes too)
	 * created the work of a note and a message without running it.
	 */
	private List<String> typesRunAfterNarrowing(Lane lane) {
		Consumer old = Consumer.builder("chat", "narrowed").types("message.sent", "note").lane(lane).run((context) -> null);
		A2Server previous = A2TestSupport.server(this.support.dataSource)
			.clock(this.support.clock)
			.runConsumers(false)
			.consumer(old)
			.build();
		Session session = previous.session("chat", A2TestSupport.newSessionId());
		session.append(note("a note"), message("a message"));

		List<String> types = new CopyOnWriteArrayList<>();
		Consumer current = Consumer.builder("chat", "narrowed").types("message.sent").lane(lane).run((context) -> {
			types.add(context.event().type());
			return null;
		});
		A2Server server = this.support.server(current);
		server.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(types).contains("message.sent"));
		assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).isTrue();
		previous.close();
		return types;
	}

	/** §5 keyed: a later event of a key waits for an earlier one backing off; a null key is independent. */
	@Test
	void aKeyedLaneKeepsOrderAcrossABackOffAndANullKeyDoesNotWait() {
		Set<Long> failedOnce = ConcurrentHashMap.newKeySet();
		List<Long> done = new CopyOnWriteArrayList<>();
		Consumer keyed = Consumer.builder("chat", "keyed")
			.types("message.sent")
			.lane(Lane.keyed((input) -> ((MessageSent) input.payload()).author()))
			.run((context) -> {
				long index = context.event().index();
				if (index == 1 && failedOnce.add(index)) {
					throw new IllegalStateException("first try fails");
				}
				done.add(index);
				return null;
			});
		A2Server server = this.support.server(keyed);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(NewEvent.of("message.sent", new MessageSent("a", "k")));
		assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).isTrue();
		session.append(NewEvent.of("message.sent", new MessageSent("b", "k")),
				NewEvent.of("message.sent", new MessageSent("c", null)));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(done).contains(3L));
		assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).isTrue();
		assertThat(done).as("event 2 of key k waits behind event 1's back-off").containsExactly(3L);

		this.support.clock.advance(Duration.ofSeconds(1));
		server.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(done).containsExactly(3L, 1L, 2L));
	}

	/** §6.4 skip of a keyed lane's dead letter unblocks the key. */
	@Test
	void skipOfAKeyedDeadLetterUnblocksItsKey() {
		List<Long> done = new CopyOnWriteArrayList<>();
		Consumer keyed = Consumer.builder("chat", "keyed")
			.types("message.sent")
			.lane(Lane.keyed((input) -> "k"))
			.run((context) -> {
				if (context.event().index() == 1) {
					throw new NonRetriableException("poison");
				}
				done.add(context.event().index());
				return null;
			});
		A2Server server = this.support.server(keyed);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("1"), message("2"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), null, 10)).hasSize(1));
		assertThat(server.awaitDrain(DrainActivity::idle, Duration.ofSeconds(20))).isTrue();
		assertThat(done).isEmpty();
		assertThat(server.redrive("chat", session.id(), "keyed", 1, RedriveAction.SKIP)).isTrue();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(done).containsExactly(2L));
	}


	/** §5 run: returned events of a type the contract lacks fail the attempt with a clear error and write nothing. */
	@Test
	void aRunReturningAnUnknownTypeFailsClearlyAndWritesNothing() {
		Consumer bad = Consumer.builder("chat", "bad")
			.types("message.sent")
			.run((context) -> List.of(note("fine"), NewEvent.of("made.up", new TestContracts.Note("x"))));
		A2Server server = this.support.server(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withMaxFailures(1), bad);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("go"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), null, 10)).singleElement()
				.satisfies((letter) -> assertThat(letter.lastError()).contains("made.up")));
		assertThat(session.history(0, 100).events()).extracting(Event::type).containsExactly("message.sent");
	}

}
