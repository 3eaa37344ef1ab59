package dev.a2.store.postgres;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
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

}
