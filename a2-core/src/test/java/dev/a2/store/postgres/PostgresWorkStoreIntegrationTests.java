package dev.a2.store.postgres;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.store.Claim;
import dev.a2.store.EventToStore;
import dev.a2.store.WorkUnit;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

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

}
