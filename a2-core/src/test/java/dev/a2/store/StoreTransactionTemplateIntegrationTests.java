package dev.a2.store;

import javax.sql.DataSource;

import dev.a2.LogCapture;
import dev.a2.test.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionSystemException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A2's transactions when PostgreSQL ends their connection under them, as in an outage. */
@ExtendWith(PostgresExtension.class)
class StoreTransactionTemplateIntegrationTests {

	/**
	 * Spring's template logged "Application exception overridden by rollback exception" at ERROR with
	 * two stack traces for each such transaction in an outage (a trial saw five in twelve seconds), and
	 * threw the rollback's failure ("This connection has been closed") in place of the statement's.
	 */
	@Test
	void aTransactionWhoseConnectionPostgresEndedFailsWithTheStatementsFailureAndLogsNoError(DataSource dataSource) {
		StoreTransactionTemplate transactions = new StoreTransactionTemplate(new DataSourceTransactionManager(dataSource));
		JdbcClient jdbc = JdbcClient.create(dataSource);
		try (LogCapture log = new LogCapture()) {
			assertThatThrownBy(() -> transactions.execute((status) -> {
				jdbc.sql("CREATE TEMPORARY TABLE never_committed (n int)").update();
				return jdbc.sql("SELECT pg_terminate_backend(pg_backend_pid())").query().singleValue();
			})).isNotInstanceOf(TransactionSystemException.class)
				.satisfies((ex) -> assertThat(StoreFailures.isUnavailable(ex)).as("an outage's failure").isTrue())
				.hasMessageContaining("terminating connection")
				.satisfies((ex) -> assertThat(ex.getSuppressed()).as("the rollback's failure, kept").hasSize(1));
			assertThat(log.lines("overridden by rollback exception")).isEmpty();
		}
		// and the next transaction runs on a connection of its own
		Integer one = transactions.execute((status) -> jdbc.sql("SELECT 1").query(Integer.class).single());
		assertThat(one).isEqualTo(1);
	}

	@Test
	void aFailureThatIsNoOutageIsRolledBackAndThrownAsItWas(DataSource dataSource) {
		StoreTransactionTemplate transactions = new StoreTransactionTemplate(new DataSourceTransactionManager(dataSource));
		JdbcClient jdbc = JdbcClient.create(dataSource);
		jdbc.sql("CREATE TABLE IF NOT EXISTS rolled_back (n int)").update();
		IllegalStateException thrown = new IllegalStateException("the application's own");
		assertThatThrownBy(() -> transactions.execute((status) -> {
			jdbc.sql("INSERT INTO rolled_back VALUES (1)").update();
			throw thrown;
		})).isSameAs(thrown);
		assertThat(jdbc.sql("SELECT count(*) FROM rolled_back").query(Long.class).single()).isZero();
	}

}
