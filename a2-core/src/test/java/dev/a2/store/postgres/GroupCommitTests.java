package dev.a2.store.postgres;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Group commit with a store that holds its calls until the others queued: who is combined with
 * whom, in which order, and how a failed round ends for each caller. (The real store under
 * concurrent writers is in {@code GroupCommitIntegrationTests}.)
 */
class GroupCommitTests {

	private final ExecutorService callers = Executors.newFixedThreadPool(8);

	/** Each call the store got: "one s [ids]" or "all s [ids] t [ids]". */
	private final List<String> calls = new CopyOnWriteArrayList<>();

	private final CountDownLatch release = new CountDownLatch(1);

	/** Calls held on a latch of their own, by their first event's id, instead of {@link #release}. */
	private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();

	private final AtomicLong index = new AtomicLong();

	private Predicate<List<EventToStore>> refused = (events) -> false;

	private RuntimeException refusal = new IllegalStateException("refused");

	private final GroupCommit groupCommit = new GroupCommit(new GroupCommit.Store() {

		@Override
		public List<StoredEvent> appendOne(String contract, String session, List<EventToStore> events,
				@Nullable Integer clearIndex) {
			call("one " + session + " " + ids(events), events);
			return stored(events);
		}

		@Override
		public List<@Nullable List<StoredEvent>> appendAll(List<GroupCommit.SessionEvents> sessions) {
			StringBuilder call = new StringBuilder("all");
			List<EventToStore> all = new ArrayList<>();
			for (GroupCommit.SessionEvents session : sessions) {
				call.append(' ').append(session.session()).append(' ').append(ids(session.events()));
				all.addAll(session.events());
			}
			call(call.toString(), all);
			return sessions.stream().map((session) -> stored(session.events())).toList();
		}

	});

	@AfterEach
	void stop() {
		this.callers.shutdownNow();
	}

	@Test
	void appendsOfManySessionsArrivingWhileARoundRunsAreStoredTogetherInOrder() throws Exception {
		Future<List<StoredEvent>> first = append(1, "s", "a");
		await().until(() -> this.calls.size() == 1);
		List<Future<List<StoredEvent>>> queued = new ArrayList<>();
		queued.add(queue(1, "s", "b1", "b2"));
		queued.add(queue(1, "t", "c1", "c2"));
		queued.add(queue(1, "s", "d1"));
		queued.add(queue(1, "u", "e1"));
		this.release.countDown();

		assertThat(first.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("a");
		assertThat(queued.get(0).get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("b1", "b2");
		assertThat(queued.get(1).get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("c1", "c2");
		assertThat(queued.get(2).get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("d1");
		assertThat(queued.get(3).get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("e1");
		// a session's callers in the order they came, each caller's events together and in order
		assertThat(this.calls).containsExactly("one s [a]", "all s [b1, b2, d1] t [c1, c2] u [e1]");
		assertThat(this.groupCommit.rounds()).isEqualTo(2);
	}

	@Test
	void upToTheLeadersRoundsRunAtOnceAndALoneAppendWaitsForNone() throws Exception {
		Future<List<StoredEvent>> first = append(2, "s", "a");
		await().until(() -> this.calls.size() == 1);
		// a round is free: this one runs at once, beside the first, and is held as well
		Future<List<StoredEvent>> second = append(2, "t", "b");
		await().until(() -> this.calls.size() == 2);
		Future<List<StoredEvent>> third = append(2, "u", "c");
		await().until(() -> this.groupCommit.waiting() == 1);
		assertThat(this.calls).containsExactly("one s [a]", "one t [b]");
		this.release.countDown();
		assertThat(third.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("c");
		assertThat(first.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("a");
		assertThat(second.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("b");
	}

	@Test
	void whileARoundRunsAFreeRoundWaitsForAShareOfTheCallersAndTakesThemInTheirOrder() throws Exception {
		TwoRounds rounds = aRoundOfThreeBesideARoundOfOne();
		rounds.ofOne().countDown();
		assertThat(rounds.first().get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("a");
		// a round of three runs and one is free: one caller, then two, are less than half of the
		// callers; the third makes a share, and the three go together, in the order they came
		List<Future<List<StoredEvent>>> next = new ArrayList<>();
		next.add(queue(2, "x", "d1"));
		next.add(queue(2, "y", "d2"));
		next.add(append(2, "x", "d3"));
		await().until(() -> this.calls.size() == 4);
		assertThat(this.groupCommit.waiting()).isZero();
		this.release.countDown();
		rounds.ofThree().countDown();
		for (Future<List<StoredEvent>> answer : rounds.three()) {
			assertThat(answer.get(10, TimeUnit.SECONDS)).hasSize(1);
		}
		assertThat(next.get(0).get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("d1");
		assertThat(next.get(2).get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("d3");
		assertThat(this.calls).containsExactly("one s [a]", "one t [b]", "all u [c1] v [c2] w [c3]", "all x [d1, d3] y [d2]");
	}

	@Test
	void theLastRoundToEndHandsOnWhatQueuedThoughItIsNoShare() throws Exception {
		TwoRounds rounds = aRoundOfThreeBesideARoundOfOne();
		// beside the round of three, one caller is no share: when the round of one ends, it waits
		Future<List<StoredEvent>> last = queue(2, "x", "d");
		rounds.ofOne().countDown();
		assertThat(rounds.first().get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("a");
		assertThat(this.groupCommit.waiting()).isEqualTo(1);
		assertThat(this.groupCommit.running()).isEqualTo(1);
		// the round of three is the last: it hands on to the one queued
		this.release.countDown();
		rounds.ofThree().countDown();
		assertThat(last.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("d");
		for (Future<List<StoredEvent>> answer : rounds.three()) {
			assertThat(answer.get(10, TimeUnit.SECONDS)).hasSize(1);
		}
		assertThat(this.calls).containsExactly("one s [a]", "one t [b]", "all u [c1] v [c2] w [c3]", "one x [d]");
		await().until(() -> this.groupCommit.running() == 0);
	}

	@Test
	void anAppendToASessionInARunningRoundWaitsForItThoughARoundIsFree() throws Exception {
		Future<List<StoredEvent>> first = append(4, "s", "a");
		await().until(() -> this.calls.size() == 1);
		// rounds are free, but s is being stored: these wait, and go together after it
		Future<List<StoredEvent>> second = queue(4, "s", "b");
		Future<List<StoredEvent>> third = queue(4, "s", "c");
		Future<List<StoredEvent>> other = append(4, "t", "z");
		await().until(() -> this.calls.size() == 2);
		assertThat(this.calls).containsExactly("one s [a]", "one t [z]");
		this.release.countDown();
		assertThat(first.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("a");
		assertThat(second.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("b");
		assertThat(third.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("c");
		assertThat(other.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("z");
		assertThat(this.calls).hasSize(3).contains("one s [b, c]");
	}

	@Test
	void linesAreCombinedOnlyWithinThemselves() throws Exception {
		// on Citus each session is a line of its own: its appends never meet another session's
		Future<List<StoredEvent>> first = this.callers.submit(() -> this.groupCommit.append("s", 1, "c", "s", events("a"), null));
		await().until(() -> this.calls.size() == 1);
		Future<List<StoredEvent>> sameLine = this.callers.submit(() -> this.groupCommit.append("s", 1, "c", "s", events("b"), null));
		await().until(() -> this.groupCommit.waiting() == 1);
		Future<List<StoredEvent>> otherLine = this.callers.submit(() -> this.groupCommit.append("t", 1, "c", "t", events("z"), null));
		await().until(() -> this.calls.size() == 2);
		assertThat(this.calls).containsExactly("one s [a]", "one t [z]");
		this.release.countDown();
		assertThat(first.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("a");
		assertThat(sameLine.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("b");
		assertThat(otherLine.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("z");
	}

	@Test
	void oneIdSentByTwoCallersIsStoredOnceAndAnswersBoth() throws Exception {
		Future<List<StoredEvent>> first = append(1, "s", "a");
		await().until(() -> this.calls.size() == 1);
		Future<List<StoredEvent>> original = queue(1, "s", "x", "y");
		Future<List<StoredEvent>> other = queue(1, "t", "x");
		Future<List<StoredEvent>> retry = queue(1, "s", "x", "y");
		this.release.countDown();
		first.get(10, TimeUnit.SECONDS);
		assertThat(retry.get(10, TimeUnit.SECONDS)).isEqualTo(original.get(10, TimeUnit.SECONDS));
		// the same id in another session is another event
		assertThat(other.get(10, TimeUnit.SECONDS).get(0)).isNotEqualTo(original.get(10, TimeUnit.SECONDS).get(0));
		assertThat(this.calls).containsExactly("one s [a]", "all s [x, y] t [x]");
	}

	@Test
	void aRoundThatFailsIsStoredAgainByEachCallerAloneAndFailsOnlyTheOneRefused() throws Exception {
		this.refused = (events) -> events.stream().anyMatch((event) -> event.id().equals("poison"));
		Future<List<StoredEvent>> first = append(1, "s", "a");
		await().until(() -> this.calls.size() == 1);
		Future<List<StoredEvent>> good = queue(1, "s", "g1", "g2");
		Future<List<StoredEvent>> bad = queue(1, "t", "poison");
		Future<List<StoredEvent>> other = queue(1, "u", "o");
		this.release.countDown();
		first.get(10, TimeUnit.SECONDS);
		assertThat(good.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("g1", "g2");
		assertThat(other.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("o");
		assertThatThrownBy(() -> bad.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("refused");
		// the failed round, then one statement for each of its callers, whatever their order
		assertThat(this.calls).hasSize(5)
			.startsWith("one s [a]", "all s [g1, g2] t [poison] u [o]")
			.contains("one s [g1, g2]", "one t [poison]", "one u [o]");
	}

	@Test
	void anUnavailableStoreFailsEveryCallerOfTheRound() throws Exception {
		this.refused = (events) -> events.size() > 1;
		this.refusal = new A2Exception(ErrorCode.STORE_UNAVAILABLE, "down");
		Future<List<StoredEvent>> first = append(1, "s", "a");
		await().until(() -> this.calls.size() == 1);
		Future<List<StoredEvent>> one = append(1, "s", "b");
		Future<List<StoredEvent>> two = append(1, "t", "c");
		await().until(() -> this.groupCommit.waiting() == 2);
		this.release.countDown();
		first.get(10, TimeUnit.SECONDS);
		assertThatThrownBy(() -> one.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("down");
		assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("down");
		// nobody tried again on a database that is down
		assertThat(this.calls).hasSize(2);
	}

	/**
	 * Two rounds of two at once, each held: "one s [a]" (released by {@code ofOne}), and, once a
	 * round "t [b]" beside it has ended, the three callers queued behind them, "all u [c1] v [c2] w
	 * [c3]" (released by {@code ofThree}).
	 */
	private TwoRounds aRoundOfThreeBesideARoundOfOne() throws Exception {
		CountDownLatch ofOne = hold("a");
		CountDownLatch b = hold("b");
		CountDownLatch ofThree = hold("c1");
		Future<List<StoredEvent>> first = append(2, "s", "a");
		await().until(() -> this.calls.size() == 1);
		// one caller queued is a share of two: the second round starts beside the first
		Future<List<StoredEvent>> second = append(2, "t", "b");
		await().until(() -> this.calls.size() == 2);
		List<Future<List<StoredEvent>>> three = new ArrayList<>();
		three.add(queue(2, "u", "c1"));
		three.add(queue(2, "v", "c2"));
		three.add(queue(2, "w", "c3"));
		b.countDown();
		assertThat(second.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("b");
		await().until(() -> this.calls.size() == 3);
		return new TwoRounds(first, ofOne, three, ofThree);
	}

	private record TwoRounds(Future<List<StoredEvent>> first, CountDownLatch ofOne, List<Future<List<StoredEvent>>> three,
			CountDownLatch ofThree) {
	}

	private CountDownLatch hold(String id) {
		CountDownLatch latch = new CountDownLatch(1);
		this.holds.put(id, latch);
		return latch;
	}

	private Future<List<StoredEvent>> append(int leaders, String session, String... ids) {
		return this.callers.submit(() -> this.groupCommit.append("", leaders, "c", session, events(ids), null));
	}

	/** An append that queues, once the ones before it have: the queue's order is the calls' order. */
	private Future<List<StoredEvent>> queue(int leaders, String session, String... ids) {
		int waiting = this.groupCommit.waiting();
		Future<List<StoredEvent>> answer = append(leaders, session, ids);
		await().until(() -> this.groupCommit.waiting() == waiting + 1);
		return answer;
	}

	/** Records the call, holds it until released, and refuses what is to be refused. */
	private void call(String call, List<EventToStore> events) {
		this.calls.add(call);
		try {
			this.holds.getOrDefault(events.get(0).id(), this.release).await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (this.refused.test(events)) {
			throw this.refusal;
		}
	}

	private List<StoredEvent> stored(List<EventToStore> events) {
		return events.stream()
			.map((event) -> new StoredEvent(this.index.incrementAndGet(), event.id(), event.type(), event.payload(),
					Instant.EPOCH, 0, null))
			.toList();
	}

	private static List<EventToStore> events(String... ids) {
		return List.of(ids).stream().map((id) -> new EventToStore(id, "note", "{}", null, List.of())).toList();
	}

	private static String ids(List<EventToStore> events) {
		return events.stream().map(EventToStore::id).toList().toString();
	}

}
