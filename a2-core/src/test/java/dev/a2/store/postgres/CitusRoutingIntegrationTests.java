package dev.a2.store.postgres;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.a2.store.Claim;
import dev.a2.store.EventToStore;
import dev.a2.store.Finish;
import dev.a2.store.StoredEvent;
import dev.a2.store.WorkUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a Citus cluster ({@code A2_TEST_CITUS_URL} names its coordinator, with {@code A2_TEST_JDBC_USER}
 * and {@code A2_TEST_JDBC_PASSWORD}), A2's tables are distributed by session and each statement about
 * one session runs on one shard. Citus's own counters say so: with {@code citus.enable_stat_counters}
 * on for this test's connections only, an operation must add single-shard executions and no
 * multi-shard one. Without a cluster these tests are skipped; CI has none (see docs/scaling.md, "Beyond one
 * PostgreSQL", for running one).
 */
@EnabledIfEnvironmentVariable(named = "A2_TEST_CITUS_URL", matches = ".+",
		disabledReason = "no Citus cluster: set A2_TEST_CITUS_URL to a coordinator's JDBC URL to run these")
class CitusRoutingIntegrationTests {

	private static final String COUNTERS = """
			SELECT query_execution_single_shard, query_execution_multi_shard FROM citus_stat_counters(0)
			WHERE database_id = (SELECT oid FROM pg_database WHERE datname = current_database())""";

	private static HikariDataSource dataSource;

	private static JdbcClient jdbc;

	@BeforeAll
	static void distributedSchema() {
		String schema = "citus_routing_" + UUID.randomUUID().toString().substring(0, 8);
		String url = System.getenv("A2_TEST_CITUS_URL");
		try (HikariDataSource admin = pool(url, null)) {
			JdbcClient.create(admin).sql("CREATE SCHEMA " + schema).update();
		}
		dataSource = pool(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema,
				"SET citus.enable_stat_counters = on");
		PostgresSchema.migrate(dataSource);
		jdbc = JdbcClient.create(dataSource);
	}

	private static HikariDataSource pool(String url, String initSql) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setUsername(env("A2_TEST_JDBC_USER", "postgres"));
		config.setPassword(env("A2_TEST_JDBC_PASSWORD", "postgres"));
		config.setMaximumPoolSize(4);
		config.setConnectionInitSql(initSql);
		return new HikariDataSource(config);
	}

	private static String env(String name, String fallback) {
		String value = System.getenv(name);
		return (value != null) ? value : fallback;
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	@Test
	void everyTableIsDistributedBySessionAndColocatedWithSessions() {
		List<String> tables = jdbc.sql("""
				SELECT p.logicalrelid::regclass::text FROM pg_dist_partition p
				JOIN pg_class c ON c.oid = p.logicalrelid
				WHERE c.relnamespace = current_schema()::regnamespace
				  AND p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'a2_session'::regclass)
				  AND column_to_column_name(p.logicalrelid, p.partkey) = 'session_id'
				ORDER BY 1""").query(String.class).list();
		assertThat(tables).containsExactly("a2_cursor", "a2_event", "a2_presence", "a2_schedule", "a2_session",
				"a2_state_snapshot", "a2_work");
		assertThat(new CitusTables(dataSource).distributed()).isTrue();
	}

	@Test
	void eachStatementAboutOneSessionRunsOnOneShard() {
		PostgresEventStore events = new PostgresEventStore(dataSource);
		PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
		PostgresPresenceStore presence = new PostgresPresenceStore(dataSource);
		PostgresSnapshotStore snapshots = new PostgresSnapshotStore(dataSource);
		List<WorkUnit> creates = List.of(WorkUnit.head("echo", null), WorkUnit.cursor("projection", false, null));
		Instant now = Instant.now();
		Instant leaseUntil = now.plus(Duration.ofSeconds(30));

		List<StoredEvent> appended = oneShard("append",
				() -> events.append("chat", "s-1", List.of(new EventToStore("e-1", "message.sent", "{\"text\":\"hi\"}", null, creates))));
		assertThat(appended).extracting(StoredEvent::index).containsExactly(1L);
		assertThat(oneShard("history read", () -> events.history("chat", "s-1", 0, 100)).events()).hasSize(1);
		List<Claim> claims = oneShard("claim",
				() -> work.claim("chat", "s-1", List.of("echo", "projection"), now, leaseUntil, 10, null));
		assertThat(claims).hasSize(2);
		assertThat(oneShard("renewal", () -> work.renew(claims, leaseUntil.plusSeconds(30))))
			.containsExactlyInAnyOrderElementsOf(claims.stream().map(Claim::token).toList());
		Claim echo = claims.stream().filter((claim) -> !claim.cursor()).findFirst().orElseThrow();
		Claim projection = claims.stream().filter(Claim::cursor).findFirst().orElseThrow();
		Set<UUID> finished = oneShard("finish",
				() -> work.finish(List.of(Finish.completed(echo, List.of(new EventToStore("e-2", "echo.sent", "{}", null)), 1),
						Finish.completed(projection, List.of(), 1)), now));
		assertThat(finished).containsExactlyInAnyOrder(echo.token(), projection.token());
		assertThat(oneShard("presence write", () -> presence.write("chat", "s-1", "ann",
				Map.of("typing", "true", "cursor", "{\"line\":3}"), now, now.plusSeconds(30), now)))
			.hasSize(2);
		oneShard("snapshot save", () -> {
			snapshots.save("chat", "s-1", "count", List.of(new dev.a2.store.SnapshotStore.Snapshot(2, "{\"n\":2}")));
			return null;
		});
		assertThat(events.history("chat", "s-1", 0, 100).events()).extracting(StoredEvent::id).containsExactly("e-1", "e-2");
		// what Session.clear does, in one transaction: the marker, then the session's work ended
		DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
		PostgresEventStore clearEvents = new PostgresEventStore(dataSource, transactions);
		PostgresWorkStore clearWork = new PostgresWorkStore(dataSource, transactions, clearEvents, 10);
		StoredEvent marker = oneShard("clear", () -> new TransactionTemplate(transactions).execute((status) -> {
			StoredEvent cleared = clearEvents.clear("chat", "s-1", null);
			clearWork.endBefore("chat", "s-1", cleared.index(), cleared.clearIndex() + 1);
			return cleared;
		}));
		assertThat(marker.index()).isEqualTo(3);
		assertThat(events.history("chat", "s-1", 0, 100).events()).isEmpty();
	}

	@Test
	void aSessionsBackfillClaimAfterAClearFailuresAndTombstonesRunOnOneShard() {
		PostgresEventStore events = new PostgresEventStore(dataSource);
		PostgresWorkStore work = new PostgresWorkStore(dataSource, events, 10);
		PostgresPresenceStore presence = new PostgresPresenceStore(dataSource);
		Instant now = Instant.now();
		Instant leaseUntil = now.plus(Duration.ofSeconds(30));
		events.append("chat", "s-2", List.of(new EventToStore("e-1", "message.sent", "{}", null, List.of(WorkUnit.head("echo", null)))));
		DataSourceTransactionManager transactions = new DataSourceTransactionManager(dataSource);
		PostgresEventStore clearEvents = new PostgresEventStore(dataSource, transactions);
		PostgresWorkStore clearWork = new PostgresWorkStore(dataSource, transactions, clearEvents, 10);
		new TransactionTemplate(transactions).executeWithoutResult((status) -> {
			StoredEvent cleared = clearEvents.clear("chat", "s-2", null);
			clearWork.endBefore("chat", "s-2", cleared.index(), cleared.clearIndex() + 1);
		});
		// a backfilling consumer's first event after the clear creates its cursor at 0
		events.append("chat", "s-2", List.of(new EventToStore("e-3", "message.sent", "{}", null,
				List.of(WorkUnit.head("echo", null), WorkUnit.cursor("fresh", true, null)))));

		// what consume does for a backfilling consumer the sweep's walk has not reached: its cursor starts at the clear
		oneShard("backfill of one session", () -> {
			work.backfill("chat", "s-2", "late", null);
			return null;
		});
		assertThat(work.cursor("chat", "s-2", "late")).satisfies((cursor) -> {
			assertThat(cursor.position()).isEqualTo(2);
			assertThat(cursor.target()).isEqualTo(3);
		});
		List<Claim> claims = oneShard("claim after a clear",
				() -> work.claim("chat", "s-2", List.of("echo", "late", "fresh"), now, leaseUntil, 10, null));
		assertThat(claims).hasSize(3);
		Claim echo = claims.stream().filter((claim) -> !claim.cursor()).findFirst().orElseThrow();
		Claim late = claims.stream().filter((claim) -> claim.consumer().equals("late")).findFirst().orElseThrow();
		Claim fresh = claims.stream().filter((claim) -> claim.consumer().equals("fresh")).findFirst().orElseThrow();
		// both cursors read only what came after the clear
		assertThat(late.events()).extracting(StoredEvent::id).containsExactly("e-3");
		assertThat(fresh.position()).isZero();
		assertThat(fresh.events()).extracting(StoredEvent::id).containsExactly("e-3");
		Set<UUID> failed = oneShard("failed finish",
				() -> work.finish(List.of(Finish.failed(echo, List.of(), echo.index(), "boom", 3, now.plusSeconds(5), false),
						Finish.failed(late, List.of(), late.position(), "boom", 3, now.plusSeconds(5), false),
						Finish.failed(fresh, List.of(), fresh.position(), "boom", 3, now.plusSeconds(5), false)), now));
		assertThat(failed).containsExactlyInAnyOrder(echo.token(), late.token(), fresh.token());
		assertThat(work.cursor("chat", "s-2", "fresh").failedIndex()).isEqualTo(3);

		Map<String, String> removed = new HashMap<>();
		removed.put("typing", null);
		assertThat(oneShard("presence tombstone", () -> presence.write("chat", "s-2", "ann", removed, now, now.plusSeconds(30), now)))
			.singleElement()
			.satisfies((row) -> assertThat(row.value()).isNull());
	}

	/** Runs {@code operation} and asserts it executed only single-shard statements, at least one. */
	private static <T> T oneShard(String what, java.util.function.Supplier<T> operation) {
		long[] before = counters();
		T result = operation.get();
		long[] after = counters();
		assertThat(after[1] - before[1]).as(what + ": multi-shard executions").isZero();
		assertThat(after[0] - before[0]).as(what + ": single-shard executions").isPositive();
		return result;
	}

	private static long[] counters() {
		return jdbc.sql(COUNTERS).query((rs, row) -> new long[] { rs.getLong(1), rs.getLong(2) }).single();
	}

}
