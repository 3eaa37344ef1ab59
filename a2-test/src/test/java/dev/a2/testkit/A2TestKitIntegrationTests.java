package dev.a2.testkit;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import dev.a2.A2Exception;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.NonRetriableException;
import dev.a2.RedriveAction;
import dev.a2.Session;
import dev.a2.store.WorkStore;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The kit on a real PostgreSQL: retries to the dead letter in virtual time, a crash after a run's
 * effects, a zombie attempt, a schedule an hour away, a drain that cannot get idle, an outage.
 */
class A2TestKitIntegrationTests {

	record Note(String text) {
	}

	static final Contract ORDERS = Contract.builder("orders")
		.event("order.placed", Note.class)
		.event("order.shipped", Note.class)
		.event("effect.written", Note.class)
		.event("flaky.requested", Note.class)
		.event("reminder.requested", Note.class)
		.event("reminder.due", Note.class)
		.event("stuck.requested", Note.class)
		.event("keyed.requested", Note.class)
		.event("ping", Note.class)
		.build();

	static final Contract BILLING = Contract.builder("billing").event("ping", Note.class).build();

	static volatile CountDownLatch unstuck = new CountDownLatch(1);

	/** Appends an effect itself, and returns the shipment: one of each, however often it runs. */
	static final Consumer SHIPPER = Consumer.builder("orders", "shipper").types("order.placed").run((context) -> {
		context.session().append("effect", NewEvent.of("effect.written", new Note("charged")));
		return NewEvent.of("order.shipped", new Note("shipped"));
	});

	static final Consumer FLAKY = Consumer.builder("orders", "flaky").types("flaky.requested").run((context) -> {
		throw new IllegalStateException("the mail server is down");
	});

	static final Consumer REMINDER = Consumer.builder("orders", "reminder").types("reminder.requested").run((context) -> {
		context.session().schedule("in-an-hour", Duration.ofHours(1), NewEvent.of("reminder.due", new Note("ring")));
		return null;
	});

	static final Consumer STUCK = Consumer.builder("orders", "stuck").types("stuck.requested").run((context) -> {
		unstuck.await();
		return null;
	});

	/** One lane for every event: a poisoned one blocks those after it. */
	static final Consumer KEYED = Consumer.builder("orders", "keyed")
		.types("keyed.requested")
		.lane(Lane.keyed((input) -> "one-lane"))
		.run((context) -> {
			if (context.event().payload(Note.class).text().equals("poison")) {
				throw new NonRetriableException("poisoned");
			}
			return null;
		});

	/** A name two contracts give a consumer of theirs (names are unique per contract). */
	static final Consumer ORDERS_NOTIFY = Consumer.builder("orders", "notify").types("ping").run((context) -> null);

	static final Consumer BILLING_NOTIFY = Consumer.builder("billing", "notify").types("ping").run((context) -> null);

	@RegisterExtension
	static final A2TestExtension a2 = new A2TestExtension((server) -> server.contract(ORDERS)
		.contract(BILLING)
		.consumer(SHIPPER)
		.consumer(FLAKY)
		.consumer(REMINDER)
		.consumer(STUCK)
		.consumer(KEYED)
		.consumer(ORDERS_NOTIFY)
		.consumer(BILLING_NOTIFY));

	@AfterEach
	void unstick() {
		unstuck.countDown();
	}

	@Test
	void aConsumerFailingTenTimesIsDeadLetteredAfterTheDocumentedBackOffsInVirtualTime(A2TestKit kit) {
		Session session = kit.session("orders", "flaky-1");
		session.append(NewEvent.of("flaky.requested", new Note("send it")));
		Instant start = kit.now();

		kit.advanceThroughDue(Duration.ofHours(1));

		List<RunRecord> runs = kit.journal().runs("flaky");
		assertThat(runs).extracting(RunRecord::outcome)
			.containsExactly(RunOutcome.FAILED, RunOutcome.FAILED, RunOutcome.FAILED, RunOutcome.FAILED, RunOutcome.FAILED,
					RunOutcome.FAILED, RunOutcome.FAILED, RunOutcome.FAILED, RunOutcome.FAILED, RunOutcome.DEAD_LETTERED);
		assertThat(runs).extracting(RunRecord::attempt).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
		List<Duration> backOffs = kit.journal().backOffs("flaky");
		assertThat(backOffs).containsExactly(seconds(1), seconds(2), seconds(4), seconds(8), seconds(16), seconds(32),
				seconds(64), seconds(128), seconds(256));
		// each attempt ran when its back-off ended: not a virtual instant before, not after
		for (int i = 1; i < runs.size(); i++) {
			assertThat(Duration.between(runs.get(i - 1).at(), runs.get(i).at())).isEqualTo(backOffs.get(i - 1));
		}
		assertThat(runs.get(0).at()).isEqualTo(start);
		assertThat(kit.now()).isEqualTo(start.plusSeconds(511));
		assertThat(kit).hasDeadLetter("flaky", "flaky-1", 1).isQuiet();
		assertThat(kit.server().deadLetters("orders", "flaky-1", "flaky", 10)).singleElement()
			.satisfies((dead) -> assertThat(dead.lastError()).contains("the mail server is down"));
	}

	@Test
	void aCrashAfterTheRunsEffectsIsRunAgainAndItsEventsAreStoredOnce(A2TestKit kit) {
		Session session = kit.session("orders", "crash-1");
		kit.consumer("shipper").crashAfterRun();
		session.append(NewEvent.of("order.placed", new Note("a book")));

		kit.drain();
		// the effect it appended itself is there; what it returned was lost with the finish
		assertThat(session).hasEventTypes("order.placed", "effect.written");
		assertThat(kit.nextDue()).contains(kit.now().plus(kit.server().drainSettings().lease()).plusNanos(1000));

		kit.advance(kit.server().drainSettings().lease().plusSeconds(1));

		assertThat(session).hasEventTypes("order.placed", "effect.written", "order.shipped").hasNoDuplicateEffects();
		assertThat(kit.journal().runs("shipper")).extracting(RunRecord::attempt, RunRecord::outcome)
			.containsExactly(Tuple.tuple(1, RunOutcome.CRASHED),
					Tuple.tuple(2, RunOutcome.COMPLETED));
		Event shipped = session.history(0, 10).events().get(2);
		assertThat(shipped.cause().attempt()).isEqualTo(2);
		assertThat(kit).isQuiet().deadLetters().filteredOn((dead) -> dead.session().equals("crash-1")).isEmpty();
	}

	@Test
	void aZombieAttemptIsFencedAfterAnotherTookItsUnitOver(A2TestKit kit) {
		Session session = kit.session("orders", "zombie-1");
		kit.consumer("shipper").stallNext();
		session.append(NewEvent.of("order.placed", new Note("a lamp")));

		kit.drain();
		assertThat(session).hasEventTypes("order.placed");
		assertThat(kit.server().drainActivity().running()).hasSize(1);

		kit.advance(kit.server().drainSettings().lease().plusSeconds(1));

		assertThat(kit.journal().runs("shipper")).extracting(RunRecord::attempt, RunRecord::outcome, RunRecord::stalled)
			.containsExactly(Tuple.tuple(1, RunOutcome.SUPERSEDED, true),
					Tuple.tuple(2, RunOutcome.COMPLETED, false));
		assertThat(session).hasEventTypes("order.placed", "effect.written", "order.shipped").hasNoDuplicateEffects();
		assertThat(session.history(0, 10).events().get(2).cause().attempt()).isEqualTo(2);
		assertThat(kit).isQuiet();
	}

	@Test
	void anHoursScheduleFiresAtTheHourAndNotAVirtualSecondBefore(A2TestKit kit) {
		Session session = kit.session("orders", "reminder-1");
		session.append(NewEvent.of("reminder.requested", new Note("call back")));
		kit.drain();
		Instant requested = kit.now();

		kit.advance(Duration.ofHours(1).minusSeconds(1));
		assertThat(session).hasEventTypes("reminder.requested");
		assertThat(kit.nextDue()).contains(requested.plus(Duration.ofHours(1)));

		kit.advance(Duration.ofSeconds(1));
		assertThat(session).hasEventTypes("reminder.requested", "reminder.due");
		assertThat(session.history(0, 10).events().get(1).createdAt()).isEqualTo(requested.plus(Duration.ofHours(1)));
		assertThat(kit).isQuiet();
	}

	@Test
	void drainFailsWithWhatRunsAndWhatWaitsWhenAConsumerNeverFinishes(A2TestKit kit) {
		unstuck = new CountDownLatch(1);
		kit.consumer("shipper").failNext(1, new IllegalStateException("warehouse closed"));
		kit.session("orders", "waiting-1").append(NewEvent.of("order.placed", new Note("a chair")));
		kit.drain();
		kit.session("orders", "stuck-1").append(NewEvent.of("stuck.requested", new Note("hang")));

		assertThatThrownBy(() -> kit.drain(Duration.ofMillis(300))).isInstanceOf(AssertionError.class)
			.hasMessageContaining("the drainer did not get idle within 300 ms")
			.hasMessageContaining("running attempts:\n  - stuck on orders/stuck-1 #1 (attempt 1)")
			.hasMessageContaining("shipper on orders/waiting-1 #1 (attempt 1, failures 1) retrying at "
					+ kit.now().plusSeconds(1))
			.hasMessageContaining("last error: IllegalStateException: warehouse closed")
			.hasMessageContaining("stuck on orders/stuck-1 #1 (attempt 1, failures 0) claimed until");

		unstuck.countDown();
		kit.advance(Duration.ofSeconds(1));
		assertThat(kit).isQuiet();
		assertThat(kit.session("orders", "waiting-1")).hasEventTypes("order.placed", "effect.written", "order.shipped");
	}

	@Test
	void aDeadLetterBlocksItsLaneAndTheDrainerIsQuietAllTheSame(A2TestKit kit) {
		Session session = kit.session("orders", "keyed-1");
		session.append(NewEvent.of("keyed.requested", new Note("poison")), NewEvent.of("keyed.requested", new Note("fine")));

		kit.drain();

		assertThat(kit).hasDeadLetter("keyed", "keyed-1", 1).isQuiet();
		assertThat(kit.journal().runs("keyed")).extracting(RunRecord::index, RunRecord::outcome)
			.containsExactly(Tuple.tuple(1L, RunOutcome.DEAD_LETTERED));
		assertThat(kit.server().upcomingWork(100)).filteredOn((work) -> work.session().equals("keyed-1"))
			.extracting(WorkStore.Upcoming::index, WorkStore.Upcoming::dead, WorkStore.Upcoming::blocked)
			.containsExactlyInAnyOrder(Tuple.tuple(1L, true, false), Tuple.tuple(2L, false, true));

		kit.server().redrive("orders", "keyed-1", "keyed", 1, RedriveAction.SKIP);
		kit.drain();

		assertThat(kit.journal().runs("keyed")).extracting(RunRecord::index, RunRecord::outcome)
			.containsExactly(Tuple.tuple(1L, RunOutcome.DEAD_LETTERED), Tuple.tuple(2L, RunOutcome.COMPLETED));
		assertThat(kit).isQuiet();
	}

	@Test
	void failNextFailsThatManyRunsThenTheCodeRuns(A2TestKit kit) {
		Session session = kit.session("orders", "retry-1");
		kit.consumer("shipper").failNext(2);
		session.append(NewEvent.of("order.placed", new Note("a pen")));

		kit.advance(Duration.ofMinutes(1));

		assertThat(kit.journal().runs("shipper")).extracting(RunRecord::outcome)
			.containsExactly(RunOutcome.FAILED, RunOutcome.FAILED, RunOutcome.COMPLETED);
		assertThat(kit.journal().backOffs("shipper")).containsExactly(seconds(1), seconds(2));
		assertThat(session).hasEventCausedBy("order.shipped", "shipper").hasEventCount("effect.written", 1);
	}

	@Test
	void anUnavailableStoreFailsTheNextOperationsAndChangesNothing(A2TestKit kit) {
		Session session = kit.session("orders", "outage-1");
		kit.storeUnavailable(1);

		assertThatThrownBy(() -> session.append(NewEvent.of("order.placed", new Note("a lamp"))))
			.isInstanceOfSatisfying(A2Exception.class, (ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.STORE_UNAVAILABLE));
		assertThat(session).hasEventTypes();

		session.append(NewEvent.of("order.placed", new Note("a lamp")));
		kit.drain();
		assertThat(session).hasEventTypes("order.placed", "effect.written", "order.shipped");
	}

	@Test
	void drainRunsAScheduledTaskWhoseFirstSweepTheStoreRefused(A2TestKit kit) {
		Session session = kit.session("orders", "outage-2");
		session.schedule("now", kit.now(), NewEvent.of("order.placed", new Note("a chair")));
		kit.storeUnavailable(1);

		kit.drain();

		assertThat(session).hasEventTypes("order.placed", "effect.written", "order.shipped");
		assertThat(kit).isQuiet();
	}

	@Test
	void drainRunsARetryWhoseFirstSweepTheStoreRefused(A2TestKit kit) {
		Session session = kit.session("orders", "outage-3");
		kit.consumer("shipper").failNext(1);
		session.append(NewEvent.of("order.placed", new Note("a lamp")));
		kit.drain();
		kit.clock().moveTo(kit.nextDue().orElseThrow());
		kit.storeUnavailable(1);

		kit.drain();

		assertThat(session).hasEventTypes("order.placed", "effect.written", "order.shipped");
		assertThat(kit).isQuiet();
	}

	@Test
	void faultsAndTheJournalTellConsumersOfOneNameInTwoContractsApart(A2TestKit kit) {
		assertThatThrownBy(() -> kit.consumer("notify")).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("[orders/notify, billing/notify]")
			.hasMessageContaining("contract/name");
		kit.consumer("billing/notify").failNext(1);

		kit.session("orders", "notify-1").append(NewEvent.of("ping", new Note("x")));
		kit.drain();
		kit.session("billing", "notify-1").append(NewEvent.of("ping", new Note("x")));
		kit.drain();

		assertThat(kit.journal().runs("orders/notify")).extracting(RunRecord::outcome).containsExactly(RunOutcome.COMPLETED);
		assertThat(kit.journal().runs("billing/notify")).extracting(RunRecord::outcome).containsExactly(RunOutcome.FAILED);
		assertThat(kit.journal().runs("notify")).extracting(RunRecord::contract).containsExactly("orders", "billing");
		assertThat(kit.journal().backOffs("billing/notify")).containsExactly(seconds(1));
	}

	@Test
	void timeMovesOnlyWhenTheTestMovesIt(A2TestKit kit) {
		Instant before = kit.now();
		kit.session("orders", "still-1").append(NewEvent.of("order.placed", new Note("a cup")));
		kit.drain();
		assertThat(kit.now()).isEqualTo(before);
		assertThat(kit.session("orders", "still-1").history(0, 10).events()).allSatisfy(
				(event) -> assertThat(event.createdAt()).isEqualTo(before));
	}

	@Test
	void faultsNeedAConsumerThatRuns(A2TestKit kit) {
		assertThatThrownBy(() -> kit.consumer("nobody")).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("no consumer named 'nobody'")
			.hasMessageContaining("orders/shipper");
		assertThatThrownBy(() -> kit.consumer("billing/shipper")).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("no consumer named 'billing/shipper'");
		assertThatThrownBy(() -> kit.advance(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
	}

	private static Duration seconds(long seconds) {
		return Duration.ofSeconds(seconds);
	}

}
