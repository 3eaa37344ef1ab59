package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

import javax.sql.DataSource;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.Cause;
import dev.a2.Contract;
import dev.a2.ErrorCode;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;
import dev.a2.store.WorkUnit;
import dev.a2.test.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * Group commit across sessions on real PostgreSQL. To make a round combine for certain, a test holds
 * every round that may run at once on one session's row lock, queues the appends it means to
 * combine behind them, and lets go: the first round to end hands the lead to the first queued
 * append, which takes all the others with it.
 */
@ExtendWith(PostgresExtension.class)
class GroupCommitIntegrationTests {

	private final DataSource dataSource;

	private final JdbcClient jdbc;

	private final PostgresEventStore store;

	private final ExecutorService callers = Executors.newFixedThreadPool(72);

	GroupCommitIntegrationTests(DataSource dataSource) {
		this.dataSource = dataSource;
		this.jdbc = JdbcClient.create(dataSource);
		this.store = new PostgresEventStore(dataSource);
	}

	/** Rounds that span sessions are plain PostgreSQL's: on Citus each session has rounds of its own. */
	private void acrossSessions() {
		assumeFalse(new CitusTables(this.dataSource).distributed(), "rounds across sessions, on plain PostgreSQL");
	}

	@AfterEach
	void stop() throws InterruptedException {
		this.callers.shutdownNow();
		this.callers.awaitTermination(10, TimeUnit.SECONDS);
	}

	@Test
	void appendsOfManySessionsQueuedTogetherAreStoredInOneRound() throws Exception {
		acrossSessions();
		List<String> sessions = IntStream.range(0, 20).mapToObj((i) -> newSession()).toList();
		long before;
		List<Future<List<StoredEvent>>> answers = new ArrayList<>();
		try (Held held = holdRounds()) {
			before = held.rounds();
			for (String session : sessions) {
				answers.add(append(session, "a-" + session, "b-" + session));
			}
			awaitQueued(sessions.size());
		}
		for (int i = 0; i < sessions.size(); i++) {
			List<StoredEvent> stored = answers.get(i).get(30, TimeUnit.SECONDS);
			assertThat(stored).extracting(StoredEvent::id).containsExactly("a-" + sessions.get(i), "b-" + sessions.get(i));
			assertThat(stored).extracting(StoredEvent::index).containsExactly(1L, 2L);
			assertThat(lastIndex(sessions.get(i))).isEqualTo(2);
		}
		// one round for all twenty callers, beside the held ones
		assertThat(this.store.groupCommit().rounds() - before).isEqualTo(1);
	}

	@Test
	void aRoundAnswersEachEventAsItWasStored() throws Exception {
		acrossSessions();
		// sessions with different pasts: new, with events, cleared; each caller's answer is computed
		// from its session's row, so it must agree with the rows stored
		List<String> sessions = IntStream.range(0, 12).mapToObj((i) -> newSession()).toList();
		for (int i = 0; i < sessions.size(); i++) {
			String session = sessions.get(i);
			if (i % 3 > 0) {
				this.store.append("c", session, events("old-1-" + session, "old-2-" + session, "old-3-" + session));
			}
			if (i % 3 == 2) {
				this.store.clear("c", session, null);
			}
		}
		long before;
		List<Future<List<StoredEvent>>> answers = new ArrayList<>();
		try (Held held = holdRounds()) {
			before = held.rounds();
			for (int i = 0; i < sessions.size(); i++) {
				String session = sessions.get(i);
				answers.add(append(session, IntStream.rangeClosed(1, 1 + i % 4).mapToObj((n) -> n + "-" + session).toArray(String[]::new)));
			}
			awaitQueued(sessions.size());
		}
		for (int i = 0; i < sessions.size(); i++) {
			String session = sessions.get(i);
			List<StoredEvent> stored = answers.get(i).get(30, TimeUnit.SECONDS);
			assertThat(stored).hasSize(1 + i % 4);
			assertThat(stored.get(0).index()).isEqualTo((i % 3 == 0) ? 1 : (i % 3 == 1) ? 4 : 5);
			for (StoredEvent event : stored) {
				assertThat(event.clearIndex()).isEqualTo((i % 3 == 2) ? 1 : 0);
				assertStoredAsAnswered(session, event);
			}
		}
		assertThat(this.store.groupCommit().rounds() - before).isEqualTo(1);
	}

	@Test
	void aBatchOfOneSessionAnswersEachEventAsItWasStored() {
		// the one-session statement answers only its session's new row; each event's answer is worked
		// out from it, so it must agree with the rows stored, whatever the session's past and the
		// statement's variant (plain, with causes, with work)
		Cause cause = new Cause("writer", "lane", 7, 2);
		for (int i = 0; i < 12; i++) {
			String session = newSession();
			if (i % 3 > 0) {
				this.store.append("c", session, events("old-1", "old-2", "old-3"));
			}
			if (i % 3 == 2) {
				this.store.clear("c", session, null);
			}
			int size = 1 + i % 4;
			int variant = i / 4;
			List<EventToStore> batch = IntStream.rangeClosed(1, size)
				.mapToObj((n) -> switch (variant) {
					case 0 -> new EventToStore("e" + n, "note", "{}", null);
					case 1 -> new EventToStore("e" + n, "note", "{}", cause);
					default -> new EventToStore("e" + n, "note", "{}", null, List.of(WorkUnit.head("batch", null)));
				})
				.toList();
			List<StoredEvent> stored = this.store.append("c", session, batch);
			long first = (i % 3 == 0) ? 1 : (i % 3 == 1) ? 4 : 5;
			assertThat(stored).extracting(StoredEvent::id).containsExactlyElementsOf(batch.stream().map(EventToStore::id).toList());
			assertThat(stored).extracting(StoredEvent::index)
				.containsExactlyElementsOf(LongStream.range(first, first + size).boxed().toList());
			for (StoredEvent event : stored) {
				assertThat(event.clearIndex()).isEqualTo((i % 3 == 2) ? 1 : 0);
				assertStoredAsAnswered(session, event);
			}
			assertThat(this.store.range("c", session, first - 1, first - 1 + size, 10)).containsExactlyElementsOf(stored);
			assertThat(this.jdbc.sql("SELECT idx FROM a2_work WHERE consumer = 'batch' AND session_id = ? ORDER BY idx")
				.param(session)
				.query(Long.class)
				.list()).isEqualTo((variant == 2) ? stored.stream().map(StoredEvent::index).toList() : List.of());
		}
	}

	@Test
	void anIdASessionHasFailsTheRoundAndEachCallerStoresAgainAloneOnce() throws Exception {
		acrossSessions();
		String retried = newSession();
		List<StoredEvent> original = this.store.append("c", retried, events("r-1"));
		List<String> others = IntStream.range(0, 6).mapToObj((i) -> newSession()).toList();
		long before;
		Future<List<StoredEvent>> retry;
		List<Future<List<StoredEvent>>> answers = new ArrayList<>();
		try (Held held = holdRounds()) {
			before = held.rounds();
			for (String session : others.subList(0, 3)) {
				answers.add(append(session, "x-" + session));
			}
			// a retried push: its first event is stored, its second is new
			retry = append(retried, "r-1", "r-2");
			for (String session : others.subList(3, 6)) {
				answers.add(append(session, "x-" + session));
			}
			awaitQueued(7);
		}
		List<StoredEvent> answered = retry.get(30, TimeUnit.SECONDS);
		assertThat(answered.get(0)).isEqualTo(original.get(0));
		assertThat(answered.get(1).index()).isEqualTo(2);
		assertThat(lastIndex(retried)).isEqualTo(2);
		for (int i = 0; i < others.size(); i++) {
			assertThat(answers.get(i).get(30, TimeUnit.SECONDS)).singleElement()
				.satisfies((event) -> assertThat(event.index()).isEqualTo(1));
			// the failed round left no index unused
			assertThat(lastIndex(others.get(i))).isEqualTo(1);
		}
		// the failed round, beside the held ones: every caller then stored its events alone, outside rounds
		assertThat(this.store.groupCommit().rounds() - before).isEqualTo(1);
	}

	@Test
	void aBatchTheDatabaseRefusesFailsOnlyItsCaller() throws Exception {
		acrossSessions();
		String refused = newSession();
		List<String> others = IntStream.range(0, 6).mapToObj((i) -> newSession()).toList();
		Future<List<StoredEvent>> bad;
		List<Future<List<StoredEvent>>> answers = new ArrayList<>();
		try (Held held = holdRounds()) {
			for (String session : others.subList(0, 3)) {
				answers.add(append(session, "x-" + session));
			}
			// past Session's validation only through the store itself: a payload that is not JSON
			bad = this.callers.submit(() -> this.store.append("c", refused,
					List.of(new EventToStore("ok", "note", "{}", null), new EventToStore("bad", "note", "{not json", null))));
			for (String session : others.subList(3, 6)) {
				answers.add(append(session, "x-" + session));
			}
			awaitQueued(7);
		}
		assertThatThrownBy(() -> bad.get(30, TimeUnit.SECONDS)).hasMessageContaining("json");
		assertThat(lastIndex(refused)).isZero();
		for (int i = 0; i < others.size(); i++) {
			assertThat(answers.get(i).get(30, TimeUnit.SECONDS)).singleElement()
				.satisfies((event) -> assertThat(event.index()).isEqualTo(1));
			assertThat(lastIndex(others.get(i))).isEqualTo(1);
		}
	}

	@Test
	void aBatchSessionRefusesNeverReachesARoundWhileTheOthersAreStored() throws Exception {
		acrossSessions();
		try (A2Server a2 = A2Server.builder()
			.dataSource(this.dataSource)
			.eventStore(this.store)
			.contract(Contract.builder("c").event("note", Note.class).build())
			.build()) {
			List<String> others = IntStream.range(0, 4).mapToObj((i) -> newSession()).toList();
			List<Future<?>> answers = new ArrayList<>();
			try (Held held = holdRounds()) {
				for (String session : others) {
					answers.add(this.callers.submit(() -> a2.session("c", session).append(NewEvent.of("note", new Note("fine")))));
				}
				awaitQueued(4);
				// refused at once, while every round is held: it never waited for one, nor joined one
				String refused = newSession();
				assertThatThrownBy(() -> a2.session("c", refused)
					.append(NewEvent.of("note", new Note("fine")), NewEvent.of("unknown.type", Map.of())))
					.isInstanceOfSatisfying(A2Exception.class, (ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.INVALID_PAYLOAD));
				assertThat(this.store.groupCommit().waiting()).isEqualTo(4);
				assertThat(lastIndex(refused)).isZero();
			}
			for (Future<?> answer : answers) {
				answer.get(30, TimeUnit.SECONDS);
			}
			for (String session : others) {
				assertThat(lastIndex(session)).isEqualTo(1);
			}
		}
	}

	@Test
	void oneIdSentByTwoCallersInARoundIsStoredOnceAndAnswersBoth() throws Exception {
		acrossSessions();
		String session = newSession();
		String otherSession = newSession();
		Future<List<StoredEvent>> original;
		Future<List<StoredEvent>> retry;
		Future<List<StoredEvent>> sameIdElsewhere;
		try (Held held = holdRounds()) {
			original = append(session, "x", "y");
			sameIdElsewhere = append(otherSession, "x");
			retry = append(session, "x", "y");
			awaitQueued(3);
		}
		assertThat(retry.get(30, TimeUnit.SECONDS)).isEqualTo(original.get(30, TimeUnit.SECONDS))
			.extracting(StoredEvent::index)
			.containsExactly(1L, 2L);
		assertThat(sameIdElsewhere.get(30, TimeUnit.SECONDS)).singleElement()
			.satisfies((event) -> assertThat(event.index()).isEqualTo(1));
		assertThat(lastIndex(session)).isEqualTo(2);
		assertThat(this.jdbc.sql("SELECT count(*) FROM a2_event WHERE session_id = ?").param(session).query(Long.class).single())
			.isEqualTo(2);
	}

	@Test
	void aRoundStoresEachSessionsWorkAndMovesEachSessionsCursor() throws Exception {
		acrossSessions();
		String first = newSession();
		String second = newSession();
		this.store.append("c", second, events("before"));
		Future<List<StoredEvent>> a;
		Future<List<StoredEvent>> b;
		try (Held held = holdRounds()) {
			a = this.callers.submit(() -> this.store.append("c", first, List.of(working("a1"), working("a2"))));
			// written by a consumer's run: its cause is stored with it
			b = this.callers.submit(() -> this.store.append("c", second, List.of(new EventToStore("b1", "note", "{}",
					new Cause("writer", "lane", 7, 2), List.of(WorkUnit.head("unit", null), WorkUnit.cursor("fixed", false, null))))));
			awaitQueued(2);
		}
		assertThat(a.get(30, TimeUnit.SECONDS)).extracting(StoredEvent::index).containsExactly(1L, 2L);
		assertThat(b.get(30, TimeUnit.SECONDS)).extracting(StoredEvent::index).containsExactly(2L);
		assertThat(this.store.range("c", second, 1, 2, 10)).singleElement()
			.satisfies((event) -> assertThat(event.cause()).isEqualTo(new Cause("writer", "lane", 7, 2)));
		assertThat(this.store.range("c", first, 0, 2, 10)).extracting(StoredEvent::cause).containsOnlyNulls();
		assertThat(this.jdbc.sql("SELECT session_id || ':' || idx FROM a2_work WHERE consumer = 'unit' ORDER BY 1")
			.query(String.class)
			.list()).containsExactlyInAnyOrder(first + ":1", first + ":2", second + ":2");
		// a cursor created by the round starts before the round's first event of its session
		assertThat(this.jdbc.sql("SELECT session_id || ':' || position || '-' || target FROM a2_cursor WHERE consumer = 'fixed'")
			.query(String.class)
			.list()).containsExactlyInAnyOrder(first + ":0-2", second + ":1-2");
	}

	@Test
	void sixtyFourWritersOnEightSessionsGetContiguousIndexesWithEachAppendTogetherAndInOrder() throws Exception {
		List<String> sessions = IntStream.range(0, 8).mapToObj((i) -> newSession()).toList();
		long before = this.store.groupCommit().rounds();
		List<Callable<List<List<Long>>>> writers = new ArrayList<>();
		int appendsPerWriter = 40;
		for (int w = 0; w < 64; w++) {
			String session = sessions.get(w % 8);
			writers.add(() -> {
				List<List<Long>> appended = new ArrayList<>();
				for (int n = 0; n < appendsPerWriter; n++) {
					// single events and small batches interleave
					int size = ThreadLocalRandom.current().nextInt(1, 4);
					List<EventToStore> batch = IntStream.range(0, size)
						.mapToObj((i) -> new EventToStore(UUID.randomUUID().toString(), "note", "{}", null))
						.toList();
					List<StoredEvent> stored = this.store.append("c", session, batch);
					assertThat(stored).extracting(StoredEvent::id).containsExactlyElementsOf(batch.stream().map(EventToStore::id).toList());
					appended.add(stored.stream().map(StoredEvent::index).toList());
				}
				return appended;
			});
		}
		List<Future<List<List<Long>>>> results = this.callers.invokeAll(writers);
		List<List<Long>> perSession = new ArrayList<>();
		sessions.forEach((s) -> perSession.add(new ArrayList<>()));
		int appends = 0;
		for (int w = 0; w < results.size(); w++) {
			List<Long> mine = new ArrayList<>();
			for (List<Long> indexes : results.get(w).get(60, TimeUnit.SECONDS)) {
				// each append's events adjacent and in order
				for (int i = 1; i < indexes.size(); i++) {
					assertThat(indexes.get(i)).isEqualTo(indexes.get(i - 1) + 1);
				}
				mine.addAll(indexes);
				appends++;
			}
			// a writer's appends land in the order it made them
			assertThat(mine).isSorted();
			perSession.get(w % 8).addAll(mine);
		}
		for (int s = 0; s < sessions.size(); s++) {
			List<Long> indexes = perSession.get(s);
			Collections.sort(indexes);
			assertThat(indexes).containsExactlyElementsOf(LongStream.rangeClosed(1, indexes.size()).boxed().toList());
			assertThat(lastIndex(sessions.get(s))).isEqualTo(indexes.size());
			assertThat(this.jdbc.sql("SELECT count(*) FROM a2_event WHERE session_id = ?")
				.param(sessions.get(s))
				.query(Long.class)
				.single()).isEqualTo(indexes.size());
		}
		assertThat(this.store.groupCommit().rounds() - before).isLessThan(appends);
	}

	@Test
	void noMoreRoundsRunAtOnceThanTheStoreIsGiven() throws Exception {
		acrossSessions();
		PostgresEventStore two = new PostgresEventStore(this.dataSource, new DataSourceTransactionManager(this.dataSource),
				null, 2);
		List<String> sessions = IntStream.range(0, 3).mapToObj((i) -> newSession()).toList();
		List<Connection> locks = new ArrayList<>();
		for (String session : sessions) {
			two.append("c", session, events("first-" + session));
			locks.add(lockRow(session));
		}
		List<Future<List<StoredEvent>>> answers = new ArrayList<>();
		for (String session : sessions) {
			answers.add(this.callers.submit(() -> two.append("c", session, events("second-" + session))));
		}
		// two rounds wait for their sessions' locks; the third append waits for a round
		await().until(() -> two.groupCommit().running() == 2 && two.groupCommit().waiting() == 1);
		for (Connection lock : locks) {
			try (lock) {
				lock.commit();
			}
		}
		for (int i = 0; i < sessions.size(); i++) {
			assertThat(answers.get(i).get(30, TimeUnit.SECONDS)).extracting(StoredEvent::index).containsExactly(2L);
		}
		assertThatThrownBy(() -> new PostgresEventStore(this.dataSource, new DataSourceTransactionManager(this.dataSource),
				null, 0))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessage("appendRounds must be at least 1, was 0");
	}

	record Note(String text) {
	}

	@Test
	void aRoundLeavesOutTheAppendOfARunWhoseSessionWasClearedSinceAndStoresEverythingElse() throws Exception {
		acrossSessions();
		String cleared = clearedSession();
		String kept = newSession();
		this.store.append("c", kept, events("trigger"));
		Future<List<StoredEvent>> late;
		Future<List<StoredEvent>> push;
		Future<List<StoredEvent>> current;
		try (Held held = holdRounds()) {
			late = appendFromRun(cleared, 0, "late-1", "late-2");
			push = append(cleared, "pushed-after-the-clear");
			current = appendFromRun(kept, 0, "effect");
			awaitQueued(3);
		}
		assertRefusedAsCleared(late);
		// the session's marker is 2: the push beside the refused append follows it, alone
		assertThat(push.get(30, TimeUnit.SECONDS)).extracting(StoredEvent::index).containsExactly(3L);
		assertThat(current.get(30, TimeUnit.SECONDS)).extracting(StoredEvent::index).containsExactly(2L);
		assertThat(ids(cleared)).doesNotContain("late-1", "late-2").endsWith("pushed-after-the-clear");
		assertThat(lastIndex(cleared)).isEqualTo(3);
	}

	@Test
	void aRunOfTheSessionsNewStartInTheSameRoundDoesNotCarryAStaleRunsAppendWithIt() throws Exception {
		acrossSessions();
		String cleared = clearedSession();
		String other = newSession();
		Future<List<StoredEvent>> fresh;
		Future<List<StoredEvent>> late;
		Future<List<StoredEvent>> beside;
		try (Held held = holdRounds()) {
			// the run of an event after the clear queues first, the stale run behind it
			fresh = appendFromRun(cleared, 1, "fresh");
			awaitQueued(1);
			late = appendFromRun(cleared, 0, "late");
			awaitQueued(2);
			beside = append(other, "beside");
			awaitQueued(3);
		}
		assertRefusedAsCleared(late);
		assertThat(fresh.get(30, TimeUnit.SECONDS)).extracting(StoredEvent::index).containsExactly(3L);
		assertThat(beside.get(30, TimeUnit.SECONDS)).extracting(StoredEvent::index).containsExactly(1L);
		assertThat(ids(cleared)).doesNotContain("late").endsWith("fresh");
	}

	@Test
	void anAppendOfARunWhoseSessionWasClearedSinceStoresNothingOnEveryPath() {
		String session = clearedSession();
		Cause cause = new Cause("writer", null, 1, 1);
		// one event without a cause (the statement of a push), a batch with causes, and in a transaction
		List<List<EventToStore>> batches = List.of(events("single"),
				List.of(new EventToStore("caused-1", "note", "{}", cause), new EventToStore("caused-2", "note", "{}", cause)));
		for (List<EventToStore> batch : batches) {
			assertThatThrownBy(() -> this.store.append("c", session, batch, 0))
				.isInstanceOfSatisfying(A2Exception.class, (ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.ABORTED));
			assertThatThrownBy(() -> new TransactionTemplate(new DataSourceTransactionManager(this.dataSource))
				.executeWithoutResult((status) -> this.store.append("c", session, batch, 0)))
				.isInstanceOfSatisfying(A2Exception.class, (ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.ABORTED));
		}
		assertThat(lastIndex(session)).as("the marker, nothing after it").isEqualTo(2);
		// the clear index it has lets it through
		assertThat(this.store.append("c", session, events("after"), 1)).extracting(StoredEvent::index).containsExactly(3L);
	}

	/**
	 * Every round that may run at once, each blocked on a session's row lock. Closing lets one go
	 * first, so that a single leader takes everything queued, and then the others.
	 */
	private Held holdRounds() throws Exception {
		List<Connection> locks = new ArrayList<>();
		List<String> blockedSessions = new ArrayList<>();
		for (int i = 0; i < PostgresEventStore.DEFAULT_APPEND_ROUNDS; i++) {
			String blocked = newSession();
			this.store.append("c", blocked, events("lock"));
			locks.add(lockRow(blocked));
			blockedSessions.add(blocked);
		}
		long rounds = this.store.groupCommit().rounds();
		List<Future<List<StoredEvent>>> blockedRounds = new ArrayList<>();
		for (String blocked : blockedSessions) {
			blockedRounds.add(append(blocked, "held"));
		}
		await().until(() -> this.store.groupCommit().running() == PostgresEventStore.DEFAULT_APPEND_ROUNDS);
		return new Held(this.store.groupCommit(), locks, rounds + locks.size(), blockedRounds);
	}

	/** A transaction holding the session's row lock, until it commits. */
	private Connection lockRow(String session) throws Exception {
		Connection connection = this.dataSource.getConnection();
		connection.setAutoCommit(false);
		try (PreparedStatement lock = connection
			.prepareStatement("SELECT 1 FROM a2_session WHERE contract = 'c' AND session_id = ? FOR UPDATE")) {
			lock.setString(1, session);
			lock.executeQuery().close();
		}
		return connection;
	}

	private record Held(GroupCommit groupCommit, List<Connection> locks, long rounds,
			List<Future<List<StoredEvent>>> blockedRounds) implements AutoCloseable {

		@Override
		public void close() throws Exception {
			release(this.locks.get(0));
			// one round free: its next leader takes the whole queue, while the others are still held
			await().until(() -> this.groupCommit.waiting() == 0);
			for (Connection lock : this.locks.subList(1, this.locks.size())) {
				release(lock);
			}
			for (Future<List<StoredEvent>> round : this.blockedRounds) {
				round.get(30, TimeUnit.SECONDS);
			}
		}

		private static void release(Connection lock) throws Exception {
			try (lock) {
				lock.commit();
			}
		}

	}

	private void awaitQueued(int count) {
		await().until(() -> this.store.groupCommit().waiting() == count);
	}

	/** The row stored for the event has the index, time and clear index its append answered. */
	private void assertStoredAsAnswered(String session, StoredEvent event) {
		assertThat(this.jdbc.sql("SELECT idx, created_at, clear_index FROM a2_event WHERE session_id = ? AND id = ?")
			.params(session, event.id())
			.query((rs, row) -> List.of(rs.getLong("idx"), rs.getObject("created_at", OffsetDateTime.class).toInstant(),
					rs.getInt("clear_index")))
			.single()).containsExactly(event.index(), event.createdAt(), event.clearIndex());
	}

	private Future<List<StoredEvent>> append(String session, String... ids) {
		return this.callers.submit(() -> this.store.append("c", session, events(ids)));
	}

	/**
	 * A session with an event and then a clear (its marker is 2, its clear index 1): a run of that
	 * event began at clear index 0.
	 */
	private String clearedSession() {
		String session = newSession();
		this.store.append("c", session, events("before-the-clear"));
		this.store.clear("c", session, null);
		return session;
	}

	private static void assertRefusedAsCleared(Future<List<StoredEvent>> append) {
		assertThatThrownBy(() -> append.get(30, TimeUnit.SECONDS)).cause()
			.isInstanceOfSatisfying(A2Exception.class, (ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.ABORTED))
			.hasMessageContaining("cleared since");
	}

	/** The ids of the session's events, in index order. */
	private List<String> ids(String session) {
		return this.jdbc.sql("SELECT id FROM a2_event WHERE session_id = ? ORDER BY idx").param(session).query(String.class).list();
	}

	/** An append of a run whose trigger had {@code clearIndex}. */
	private Future<List<StoredEvent>> appendFromRun(String session, int clearIndex, String... ids) {
		return this.callers.submit(() -> this.store.append("c", session, events(ids), clearIndex));
	}

	private long lastIndex(String session) {
		return this.jdbc.sql("SELECT coalesce(max(last_index), 0) FROM a2_session WHERE session_id = ?")
			.param(session)
			.query(Long.class)
			.single();
	}

	private static List<EventToStore> events(String... ids) {
		return List.of(ids).stream().map((id) -> new EventToStore(id, "note", "{}", null)).toList();
	}

	private static EventToStore working(String id) {
		return new EventToStore(id, "note", "{}", null,
				List.of(WorkUnit.head("unit", null), WorkUnit.cursor("fixed", false, null)));
	}

	private static String newSession() {
		return "g-" + UUID.randomUUID();
	}

}
