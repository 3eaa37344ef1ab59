package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.store.Claim;
import dev.a2.store.EventToStore;
import dev.a2.store.Finish;
import dev.a2.store.InstanceLiveness;
import dev.a2.store.StoredEvent;
import dev.a2.store.WorkUnit;
import dev.a2.test.AtOnce;
import dev.a2.test.HeldRows;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class PostgresWorkStoreIntegrationTests {

	@Test
	void aClaimMadeInTheCallersTransactionLeavesThatTransactionDurable() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store", 2)) {
			PostgresSchema.migrate(dataSource);
			DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, transactions,
					new PostgresEventStore(dataSource, transactions), 10);
			JdbcClient jdbc = JdbcClient.create(dataSource);
			Instant now = Instant.now();
			// a claim's own transaction commits without waiting for the disk; the caller's must still wait
			String commits = new TransactionTemplate(transactions).execute((status) -> {
				// the embedded test database does not wait for the disk by default: this transaction does
				jdbc.sql("SET LOCAL synchronous_commit = on").update();
				work.claim("chat", "s-1", List.of("c"), now, now.plus(Duration.ofSeconds(30)), 10);
				return jdbc.sql("SELECT current_setting('synchronous_commit')").query(String.class).single();
			});
			assertThat(commits).isEqualTo("on");
		}
	}

	@Test
	void aClaimOnItsOwnAnswersBeforeItsLeasesReachTheDisk() throws Exception {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_quick", 2)) {
			PostgresSchema.migrate(dataSource);
			PostgresEventStore events = new PostgresEventStore(dataSource);
			for (int i = 0; i < 20; i++) {
				events.append("chat", "s-" + i,
						List.of(new EventToStore("e-1", "message.sent", "{}", null, List.of(WorkUnit.head("echo", null)))));
			}
			try (Connection connection = dataSource.getConnection()) {
				// durable commits, as a production database has them: only the claim's statement turns them off
				try (Statement statement = connection.createStatement()) {
					statement.execute("SET synchronous_commit = on");
				}
				SingleConnectionDataSource one = new SingleConnectionDataSource(connection, true);
				PostgresWorkStore work = new PostgresWorkStore(one, new PostgresEventStore(one), 10);
				JdbcClient jdbc = JdbcClient.create(one);
				Instant now = Instant.now();
				int ahead = 0;
				for (int i = 0; i < 20; i++) {
					assertThat(work.claim("chat", "s-" + i, List.of("echo"), now, now.plus(Duration.ofSeconds(30)), 10))
						.hasSize(1);
					// a durable commit flushes its WAL before it answers; a lease's may answer first
					if (jdbc.sql("SELECT pg_current_wal_flush_lsn() < pg_current_wal_insert_lsn()").query(Boolean.class).single()) {
						ahead++;
					}
				}
				assertThat(ahead).as("claims that answered before their commit reached the disk, of 20").isPositive();
				assertThat(jdbc.sql("SHOW synchronous_commit").query(String.class).single()).isEqualTo("on");
			}
		}
	}

	@Test
	void aClaimWhereAConnectionIsBoundWithoutATransactionUsesThatConnection() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_supports", 2)) {
			PostgresSchema.migrate(dataSource);
			DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
			PostgresEventStore events = new PostgresEventStore(dataSource, transactions);
			events.append("chat", "s-1",
					List.of(new EventToStore("e-1", "message.sent", "{}", null, List.of(WorkUnit.head("echo", null)))));
			PostgresWorkStore work = new PostgresWorkStore(dataSource, transactions, events, 10);
			JdbcClient jdbc = JdbcClient.create(dataSource);
			TransactionTemplate supports = new TransactionTemplate(transactions);
			supports.setPropagationBehavior(TransactionDefinition.PROPAGATION_SUPPORTS);
			Instant now = Instant.now();
			List<Claim> claims = supports.execute((status) -> {
				// the application's statement binds its connection to the scope, with no transaction
				jdbc.sql("SELECT 1").query(Integer.class).single();
				return work.claim("chat", "s-1", List.of("echo"), now, now.plus(Duration.ofSeconds(30)), 10);
			});
			assertThat(claims).hasSize(1);
		}
	}

	@Test
	void claimsOfAnOwnerWhoseLivenessEndedLapseAtOnceAndOnlyThose() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_owner", 4)) {
			PostgresSchema.migrate(dataSource);
			PostgresEventStore events = new PostgresEventStore(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
			List<WorkUnit> creates = List.of(WorkUnit.head("echo", null), WorkUnit.cursor("projection", false, null));
			for (String session : List.of("alive", "dead")) {
				events.append("chat", session, List.of(new EventToStore("e-1", "message.sent", "{}", null, creates)));
			}
			InstanceLiveness alive = work.liveness((owner) -> {
			});
			InstanceLiveness dead = work.liveness((owner) -> {
			});
			await().atMost(Duration.ofSeconds(10)).until(() -> alive.owner() != null && dead.owner() != null);
			assertThat(alive.owner()).isNotEqualTo(dead.owner());
			Instant now = Instant.now();
			Instant leaseUntil = now.plus(Duration.ofSeconds(30));
			List<String> consumers = List.of("echo", "projection");
			assertThat(work.claim("chat", "alive", consumers, now, leaseUntil, 10, alive.owner())).hasSize(2);
			List<Claim> orphaned = work.claim("chat", "dead", consumers, now, leaseUntil, 10, dead.owner());
			assertThat(orphaned).hasSize(2);
			assertThat(work.lapseOrphaned()).as("while both live").isZero();

			dead.close();
			assertThat(work.lapseOrphaned()).isEqualTo(2);
			assertThat(work.lapseOrphaned()).as("once").isZero();
			assertThat(work.claim("chat", "alive", consumers, now, leaseUntil, 10, alive.owner())).isEmpty();
			// taken over as a lapsed lease is: a new attempt under a new token, which fences the old one
			List<Claim> takenOver = work.claim("chat", "dead", consumers, now, leaseUntil, 10, alive.owner());
			assertThat(takenOver).hasSize(2).allSatisfy((claim) -> assertThat(claim.attempt()).isEqualTo(2));
			assertThat(work.finish(orphaned.stream().map((c) -> Finish.completed(c, List.of(), c.index())).toList(), now))
				.isEmpty();
			alive.close();
		}
	}

	@Test
	void aClaimTakesNoMoreUnitsAndCursorsTogetherThanItsLimit() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_limit", 2)) {
			PostgresSchema.migrate(dataSource);
			PostgresEventStore events = new PostgresEventStore(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
			// each run of a claim takes one of the instance's run permits: the limit is how many are free
			List<WorkUnit> creates = List.of(WorkUnit.head("echo", null), WorkUnit.head("per-author", "ann"),
					WorkUnit.cursor("projection", false, null), WorkUnit.cursor("audit", false, null));
			events.append("chat", "s-1", List.of(new EventToStore("e-1", "message.sent", "{}", null, creates),
					new EventToStore("e-2", "message.sent", "{}", null, creates)));
			List<String> consumers = List.of("echo", "per-author", "projection", "audit");
			Instant now = Instant.now();
			Instant leaseUntil = now.plus(Duration.ofSeconds(30));

			// runnable: both units of the independent consumer, the keyed one's first, and the two cursors
			List<Claim> taken = new ArrayList<>();
			for (int limit : new int[] { 1, 2 }) {
				List<Claim> claims = work.claim("chat", "s-1", consumers, now, leaseUntil, limit);
				assertThat(claims).as("claims with a limit of %d", limit).hasSize(limit);
				taken.addAll(claims);
			}
			taken.addAll(work.claim("chat", "s-1", consumers, now, leaseUntil, 10));
			assertThat(taken).hasSize(5).extracting(Claim::token).doesNotHaveDuplicates();
			assertThat(taken).filteredOn(Claim::cursor).extracting(Claim::consumer)
				.containsExactlyInAnyOrder("projection", "audit");
		}
	}

	@Test
	void appendsNeverFailWhileTheSessionsCursorsAreClaimedFinishedAndRenewed() throws Exception {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_locks", 6)) {
			PostgresSchema.migrate(dataSource);
			PostgresEventStore events = new PostgresEventStore(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
			List<String> consumers = List.of("words", "audit", "idle", "mirror", "badges");
			List<WorkUnit> creates = consumers.stream().map((c) -> WorkUnit.cursor(c, false, null)).toList();
			AtomicBoolean appending = new AtomicBoolean(true);
			// another instance drains the session's cursors while the appends go on: each finish and
			// renewal locks several cursor rows, as each append does
			CompletableFuture<Void> drain = CompletableFuture.runAsync(() -> {
				while (appending.get()) {
					Instant now = Instant.now();
					List<Claim> claims = work.claim("chat", "s-1", consumers, now, now.plus(Duration.ofSeconds(30)), 10);
					work.renew(claims, now.plus(Duration.ofSeconds(60)));
					work.finish(claims.stream().map((c) -> Finish.completed(c, List.of(), c.target())).toList(), now);
				}
			}, AtOnce.threads());
			try {
				for (int i = 0; i < 500; i++) {
					events.append("chat", "s-1", List.of(new EventToStore("e-" + i, "message.sent", "{}", null, creates)));
				}
			}
			finally {
				appending.set(false);
			}
			drain.get(1, TimeUnit.MINUTES);
			assertThat(events.history("chat", "s-1", 0, 1000).head()).isEqualTo(500);
		}
	}

	@Test
	void anAppendThatPostgresqlFailsToBreakADeadlockIsStoredOnceByItsRetry() throws Exception {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_deadlock", 3)) {
			PostgresSchema.migrate(dataSource);
			// on Citus the wait is on a worker, whose own deadlock detector picks the victim
			assumeFalse(new CitusTables(dataSource).distributed(), "PostgreSQL's deadlock detector on one database");
			PostgresEventStore events = new PostgresEventStore(dataSource);
			List<WorkUnit> creates = List.of(WorkUnit.cursor("audit", false, null), WorkUnit.cursor("projection", false, null));
			events.append("chat", "s-1", List.of(new EventToStore("e-1", "message.sent", "{}", null, creates)));
			// a writer that takes the session's cursor rows against the append's order, and waits longer
			// than the append before looking for a deadlock, so that PostgreSQL fails the append
			try (HeldRows held = HeldRows.hold(dataSource, "SET deadlock_timeout = '30s'",
					"SELECT 1 FROM a2_cursor WHERE session_id = 's-1' AND consumer = 'projection' FOR UPDATE")) {
				CompletableFuture<List<StoredEvent>> append = CompletableFuture.supplyAsync(() -> events.append("chat", "s-1",
						List.of(new EventToStore("e-2", "message.sent", "{}", null, creates))), AtOnce.threads());
				held.awaitWaiting(1);
				held.also("SELECT 1 FROM a2_cursor WHERE session_id = 's-1' AND consumer = 'audit' FOR UPDATE");
				held.release();
				assertThat(append.get(1, TimeUnit.MINUTES)).extracting(StoredEvent::index).containsExactly(2L);
			}
			JdbcClient jdbc = JdbcClient.create(dataSource);
			assertThat(jdbc.sql("SELECT idx FROM a2_event ORDER BY idx").query(Long.class).list()).containsExactly(1L, 2L);
			assertThat(jdbc.sql("SELECT target FROM a2_cursor ORDER BY consumer").query(Long.class).list()).containsExactly(2L, 2L);
		}
	}

	@Test
	void aRenewalDoesNotWaitForARowAnotherTransactionHoldsAndStillAnswersItsClaimAsHeld() throws Exception {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_renew", 3)) {
			PostgresSchema.migrate(dataSource);
			PostgresEventStore events = new PostgresEventStore(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
			events.append("chat", "s-1", List.of(new EventToStore("e-1", "message.sent", "{}", null,
					List.of(WorkUnit.head("echo", null), WorkUnit.cursor("projection", false, null)))));
			Instant now = Instant.now();
			List<Claim> claims = work.claim("chat", "s-1", List.of("echo", "projection"), now, now.plus(Duration.ofSeconds(30)), 10);
			assertThat(claims).hasSize(2);
			JdbcClient jdbc = JdbcClient.create(dataSource);
			Instant later = now.plus(Duration.ofMinutes(5));
			try (Connection other = dataSource.getConnection()) {
				// e.g. the finish of one attempt, or an append moving the cursor's target
				other.setAutoCommit(false);
				try (Statement statement = other.createStatement()) {
					statement.execute("SELECT 1 FROM a2_work WHERE session_id = 's-1' FOR UPDATE");
					statement.execute("SELECT 1 FROM a2_cursor WHERE session_id = 's-1' FOR UPDATE");
				}
				Set<UUID> held = CompletableFuture.supplyAsync(() -> work.renew(claims, later), AtOnce.threads()).get(1, TimeUnit.MINUTES);
				assertThat(held).containsExactlyInAnyOrderElementsOf(claims.stream().map(Claim::token).toList());
				other.commit();
			}
			assertThat(jdbc.sql("SELECT count(*) FROM a2_work WHERE lease_until >= :later").param("later", later.atOffset(ZoneOffset.UTC))
				.query(Integer.class).single()).isZero();
			// the next heartbeat finds the rows free
			assertThat(work.renew(claims, later)).hasSize(2);
			assertThat(jdbc.sql("SELECT (SELECT count(*) FROM a2_work WHERE lease_until >= :later) + "
					+ "(SELECT count(*) FROM a2_cursor WHERE lease_until >= :later)")
				.param("later", later.atOffset(ZoneOffset.UTC))
				.query(Integer.class).single()).isEqualTo(2);
			// a claim that was ended is not held
			jdbc.sql("UPDATE a2_work SET claim = NULL, lease_until = NULL").update();
			assertThat(work.renew(claims, later)).containsExactly(claims.stream().filter(Claim::cursor).findFirst().orElseThrow().token());
		}
	}

	@Test
	void aBackfillCreatesCursorsInTheOrderOfAnAppendRoundAndWaitsForItsRows() throws Exception {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_backfill", 3)) {
			PostgresSchema.migrate(dataSource);
			assumeFalse(new CitusTables(dataSource).distributed(), "PostgreSQL's deadlock detector on one database");
			PostgresEventStore events = new PostgresEventStore(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
			// s-2 first, so that a scan in the table's order meets it first
			for (String session : List.of("s-2", "s-1")) {
				events.append("chat", session, List.of(new EventToStore("e-1", "message.sent", "{}", null)));
			}
			String round = "INSERT INTO a2_cursor (contract, session_id, consumer, position, target) VALUES ('chat', '%s', 'audit', 0, 1)";
			// a round of s-1 and s-2 creating the new consumer's cursors as the backfill starts
			try (HeldRows held = HeldRows.hold(dataSource, round.formatted("s-1"))) {
				CompletableFuture<String> backfill = CompletableFuture.supplyAsync(() -> work.backfill("chat", "audit", null, "", 10), AtOnce.threads());
				held.awaitWaiting(1);
				held.also(round.formatted("s-2"));
				held.release();
				assertThat(backfill.get(1, TimeUnit.MINUTES)).as("it reached the last session").isEmpty();
			}
			JdbcClient jdbc = JdbcClient.create(dataSource);
			assertThat(jdbc.sql("SELECT session_id FROM a2_cursor WHERE consumer = 'audit' ORDER BY session_id")
				.query(String.class).list()).containsExactly("s-1", "s-2");
		}
	}

	@Test
	void aBackfillLooksAtTheNextSessionsOnlyAndSaysWhereToGoOn() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_backfill_window", 3)) {
			PostgresSchema.migrate(dataSource);
			PostgresEventStore events = new PostgresEventStore(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
			for (String session : List.of("s-1", "s-2", "s-3", "s-4", "s-5")) {
				events.append("chat", session, List.of(new EventToStore("e-1", "message.sent", "{}", null)));
			}
			events.append("chat", "s-3", List.of(new EventToStore("e-2", "message.sent", "{}", null,
					List.of(WorkUnit.cursor("audit", true, null)))));
			events.append("other", "s-1", List.of(new EventToStore("e-1", "message.sent", "{}", null)));
			JdbcClient jdbc = JdbcClient.create(dataSource);
			Supplier<List<String>> cursors = () -> jdbc
				.sql("SELECT contract || '/' || session_id || ' ' || position || '..' || target FROM a2_cursor "
						+ "WHERE consumer = 'audit' ORDER BY contract, session_id")
				.query(String.class)
				.list();

			assertThat(work.backfill("chat", "audit", null, "", 2)).isEqualTo("s-2");
			assertThat(cursors.get()).containsExactly("chat/s-1 0..1", "chat/s-2 0..1", "chat/s-3 0..2");
			assertThat(work.backfill("chat", "audit", null, "s-2", 2)).as("s-3 had its cursor").isEqualTo("s-4");
			assertThat(work.backfill("chat", "audit", null, "s-4", 2)).as("fewer than 2 left: the end").isEmpty();
			assertThat(cursors.get()).containsExactly("chat/s-1 0..1", "chat/s-2 0..1", "chat/s-3 0..2", "chat/s-4 0..1",
					"chat/s-5 0..1");

			// as many sessions left as asked for: the end shows at the next call, which looks at none
			assertThat(work.backfill("chat", "audit", null, "s-3", 2)).isEqualTo("s-5");
			assertThat(work.backfill("chat", "audit", null, "s-5", 2)).isEmpty();
			assertThat(work.backfill("nothing", "audit", null, "", 2)).isEmpty();
			assertThat(cursors.get()).as("nothing created twice, no other contract's").hasSize(5);
		}
	}

	@Test
	void theSweepSkipsExhaustedRowsAnotherTransactionHoldsAndDeadLettersThemNextTime() throws Exception {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_expire", 3)) {
			PostgresSchema.migrate(dataSource);
			PostgresEventStore events = new PostgresEventStore(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
			Instant now = Instant.now();
			for (String session : List.of("s-1", "s-2")) {
				events.append("chat", session, List.of(new EventToStore("e-1", "message.sent", "{}", null,
						List.of(WorkUnit.head("echo", null), WorkUnit.cursor("projection", false, null)))));
				assertThat(work.claim("chat", session, List.of("echo", "projection"), now, now.plusSeconds(1), 10)).hasSize(2);
			}
			Instant later = now.plus(Duration.ofMinutes(1));
			JdbcClient jdbc = JdbcClient.create(dataSource);
			// e.g. a clear of s-1, which takes its cursor rows before its units
			try (HeldRows held = HeldRows.hold(dataSource, "SELECT 1 FROM a2_cursor WHERE session_id = 's-1' FOR UPDATE",
					"SELECT 1 FROM a2_work WHERE session_id = 's-1' FOR UPDATE")) {
				int expired = CompletableFuture.supplyAsync(() -> work.expireExhausted(later, 1, "exhausted"), AtOnce.threads())
					.get(30, TimeUnit.SECONDS);
				assertThat(expired).as("s-2's unit and cursor").isEqualTo(2);
				held.release();
			}
			assertThat(work.expireExhausted(later, 1, "exhausted")).as("s-1's, the next time").isEqualTo(2);
			assertThat(jdbc.sql("SELECT (SELECT count(*) FROM a2_work WHERE dead) + (SELECT count(*) FROM a2_cursor WHERE dead)")
				.query(Integer.class).single()).isEqualTo(4);
		}
	}

	@Test
	void aClearBehindAFinishOfTwoCursorsAndAUnitWaitsForItAndBothGoThrough() throws Exception {
		// the finish waits for a cursor row; the clear queues behind it for the same row
		clearBehindAFinish("SELECT 1 FROM a2_cursor WHERE session_id = 's-1' AND consumer = 'audit' FOR UPDATE",
				List.of("echo", "audit", "projection"));
	}

	@Test
	void aClearBehindAFinishOfACursorAndAUnitWaitsForItAndBothGoThrough() throws Exception {
		// the finish waits for its unit; the clear queues behind it
		clearBehindAFinish("SELECT 1 FROM a2_work WHERE session_id = 's-1' AND consumer = 'echo' FOR UPDATE",
				List.of("echo", "projection"));
	}

	/**
	 * A finish of {@code consumers}' claims and a clear of their session, both waiting on a row another
	 * transaction holds ({@code hold}). A clear that took the rows in another order than the finish
	 * would close a cycle once that row is free; its connection looks for a deadlock sooner than the
	 * finish's, so PostgreSQL would fail the clear, as it failed a user's Delete in the sample.
	 */
	private void clearBehindAFinish(String hold, List<String> consumers) throws Exception {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("work_store_clear", 4)) {
			PostgresSchema.migrate(dataSource);
			assumeFalse(new CitusTables(dataSource).distributed(), "PostgreSQL's deadlock detector on one database");
			PostgresEventStore events = new PostgresEventStore(dataSource);
			PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
			events.append("chat", "s-1", List.of(new EventToStore("e-1", "message.sent", "{}", null, List.of(
					WorkUnit.head("echo", null), WorkUnit.cursor("audit", false, null), WorkUnit.cursor("projection", false, null)))));
			Instant now = Instant.now();
			List<Claim> claims = work.claim("chat", "s-1", consumers, now, now.plus(Duration.ofSeconds(30)), 10);
			assertThat(claims).hasSize(consumers.size());
			try (HeldRows held = HeldRows.hold(dataSource, hold); Connection clearing = dataSource.getConnection()) {
				CompletableFuture<Set<UUID>> finish = CompletableFuture.supplyAsync(() -> work.finish(claims.stream()
					.map((c) -> Finish.completed(c, List.of(), c.cursor() ? c.target() : c.index()))
					.toList(), now), AtOnce.threads());
				held.awaitWaiting(1);

				try (Statement statement = clearing.createStatement()) {
					statement.execute("SET deadlock_timeout = '10ms'");
				}
				SingleConnectionDataSource one = new SingleConnectionDataSource(clearing, true);
				DataSourceTransactionManager transactions = new DataSourceTransactionManager(one);
				PostgresEventStore clearEvents = new PostgresEventStore(one, transactions);
				PostgresWorkStore clearWork = new PostgresWorkStore(one, transactions, clearEvents, 10);
				// what Session.clear does
				CompletableFuture<StoredEvent> clear = CompletableFuture.supplyAsync(() -> new TransactionTemplate(transactions)
					.execute((status) -> {
						StoredEvent marker = clearEvents.clear("chat", "s-1", null);
						clearWork.endBefore("chat", "s-1", marker.index(), marker.clearIndex() + 1);
						return marker;
					}), AtOnce.threads());
				held.awaitWaiting(2);
				held.release();

				assertThat(finish.get(1, TimeUnit.MINUTES)).as("the finish, first in line, is accepted whole")
					.containsExactlyInAnyOrderElementsOf(claims.stream().map(Claim::token).toList());
				assertThat(clear.get(1, TimeUnit.MINUTES).index()).isEqualTo(2);
			}
			JdbcClient jdbc = JdbcClient.create(dataSource);
			assertThat(jdbc.sql("SELECT count(*) FROM a2_work").query(Integer.class).single()).isZero();
			assertThat(jdbc.sql("SELECT consumer || ' ' || position || ' ' || coalesce(claim::text, 'free') FROM a2_cursor ORDER BY consumer")
				.query(String.class).list()).containsExactly("audit 2 free", "projection 2 free");
		}
	}

}
