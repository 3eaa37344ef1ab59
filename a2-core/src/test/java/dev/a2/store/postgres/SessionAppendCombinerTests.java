package dev.a2.store.postgres;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Group commit of one session's appends, with a store that holds its first round until the others
 * queued: who gets combined, and how a failed round ends for each caller. (The real store under
 * concurrent writers is in {@code AppendIntegrationTests}.)
 */
class SessionAppendCombinerTests {

	private final SessionAppendCombiner combiner = new SessionAppendCombiner();

	private final ExecutorService callers = Executors.newFixedThreadPool(6);

	private final List<List<String>> rounds = new CopyOnWriteArrayList<>();

	private final CountDownLatch release = new CountDownLatch(1);

	private final AtomicLong index = new AtomicLong();

	@AfterEach
	void stop() {
		this.callers.shutdownNow();
	}

	@Test
	void appendsArrivingWhileOneRunsAreStoredTogetherInOrder() throws Exception {
		Future<List<StoredEvent>> first = call("s", List.of("a"), this::store);
		await().until(() -> this.rounds.size() == 1);
		List<Future<List<StoredEvent>>> queued = new ArrayList<>();
		for (String id : List.of("b", "c", "d")) {
			queued.add(call("s", List.of(id + "1", id + "2"), this::store));
			// one at a time, so that they queue in this order whatever the threads' scheduling
			int waiting = queued.size();
			await().until(() -> this.combiner.waiting("c", "s") == waiting);
		}
		Future<List<StoredEvent>> otherSession = call("t", List.of("z"), this::storeAtOnce);
		assertThat(otherSession.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("z");
		this.release.countDown();

		assertThat(first.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("a");
		List<Long> all = new ArrayList<>();
		for (Future<List<StoredEvent>> answer : queued) {
			List<StoredEvent> events = answer.get(10, TimeUnit.SECONDS);
			assertThat(events.get(1).index()).isEqualTo(events.get(0).index() + 1);
			all.addAll(events.stream().map(StoredEvent::index).toList());
		}
		assertThat(all).containsExactly(3L, 4L, 5L, 6L, 7L, 8L);
		// the three that waited went in fewer rounds than three
		assertThat(this.rounds).contains(List.of("b1", "b2", "c1", "c2", "d1", "d2"));
	}

	@Test
	void oneIdSentByTwoCallersIsStoredOnceAndAnswersBoth() throws Exception {
		Future<List<StoredEvent>> first = call("s", List.of("a"), this::store);
		await().until(() -> this.rounds.size() == 1);
		Future<List<StoredEvent>> original = call("s", List.of("x", "y"), this::store);
		Future<List<StoredEvent>> retry = call("s", List.of("x", "y"), this::store);
		await().until(() -> this.combiner.waiting("c", "s") == 2);
		this.release.countDown();
		first.get(10, TimeUnit.SECONDS);
		assertThat(retry.get(10, TimeUnit.SECONDS)).isEqualTo(original.get(10, TimeUnit.SECONDS));
		assertThat(this.rounds).containsExactly(List.of("a"), List.of("x", "y"));
	}

	@Test
	void aRoundThatFailsIsRunAgainOneCallerAtATime() throws Exception {
		Function<List<EventToStore>, List<StoredEvent>> refusesPoison = (events) -> {
			if (events.stream().anyMatch((event) -> event.id().equals("poison"))) {
				this.rounds.add(ids(events));
				throw new IllegalStateException("refused");
			}
			return store(events);
		};
		Future<List<StoredEvent>> first = call("s", List.of("a"), refusesPoison);
		await().until(() -> this.rounds.size() == 1);
		Future<List<StoredEvent>> good = call("s", List.of("good"), refusesPoison);
		Future<List<StoredEvent>> bad = call("s", List.of("poison"), refusesPoison);
		await().until(() -> this.combiner.waiting("c", "s") == 2);
		this.release.countDown();
		first.get(10, TimeUnit.SECONDS);
		assertThat(good.get(10, TimeUnit.SECONDS)).extracting(StoredEvent::id).containsExactly("good");
		assertThatThrownBy(() -> bad.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("refused");
	}

	@Test
	void anUnavailableStoreFailsEveryCallerOfTheRound() throws Exception {
		Function<List<EventToStore>, List<StoredEvent>> down = (events) -> {
			List<StoredEvent> stored = store(events);
			if (events.size() > 1) {
				throw new A2Exception(ErrorCode.STORE_UNAVAILABLE, "down");
			}
			return stored;
		};
		Future<List<StoredEvent>> first = call("s", List.of("a"), down);
		await().until(() -> this.rounds.size() == 1);
		Future<List<StoredEvent>> one = call("s", List.of("b"), down);
		Future<List<StoredEvent>> two = call("s", List.of("c"), down);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.combiner.waiting("c", "s") == 2);
		this.release.countDown();
		first.get(10, TimeUnit.SECONDS);
		assertThatThrownBy(() -> one.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("down");
		assertThatThrownBy(() -> two.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("down");
	}

	private Future<List<StoredEvent>> call(String session, List<String> ids, Function<List<EventToStore>, List<StoredEvent>> store) {
		return this.callers.submit(() -> this.combiner.append("c", session, events(ids), store));
	}

	/** Stores and answers the events, holding the first round until released. */
	private List<StoredEvent> store(List<EventToStore> events) {
		this.rounds.add(ids(events));
		if (this.rounds.size() == 1) {
			try {
				this.release.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		return stored(events);
	}

	private List<StoredEvent> storeAtOnce(List<EventToStore> events) {
		this.rounds.add(ids(events));
		return stored(events);
	}

	private List<StoredEvent> stored(List<EventToStore> events) {
		return events.stream()
			.map((event) -> new StoredEvent(this.index.incrementAndGet(), event.id(), event.type(), event.payload(),
					Instant.EPOCH, 0, null))
			.toList();
	}

	private static List<EventToStore> events(List<String> ids) {
		return ids.stream().map((id) -> new EventToStore(id, "note", "{}", null, List.of())).toList();
	}

	private static List<String> ids(List<EventToStore> events) {
		return events.stream().map(EventToStore::id).toList();
	}

}
