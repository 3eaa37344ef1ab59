package dev.a2;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

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
