package dev.a2.autoconfigure;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.PresenceWrite;
import dev.a2.Session;
import dev.a2.store.PresenceStore;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What spans A2's stores runs in one transaction of the application's transaction manager. */
class A2TransactionsIntegrationTests {

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("transactions", 4);

	@AfterEach
	void closeDataSource() {
		this.dataSource.close();
	}

	@Test
	void aPushWhosePresenceWriteFailsStoresNoEvents() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(A2AutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class))
			.withBean(DataSource.class, () -> new DelegatingDataSource(this.dataSource))
			.withBean(Contract.class, () -> Contract.builder("chat").event("said", String.class).presence("typing", Boolean.class).build())
			.withBean(PresenceStore.class, FailingPresence::new)
			.run((context) -> {
				Session session = context.getBean(A2Server.class).session("chat", "s1");
				assertThatThrownBy(() -> session.append(List.of(NewEvent.of("said", "hi")),
						PresenceWrite.of("ann", Map.of("typing", false))))
					.hasRootCauseInstanceOf(DataAccessResourceFailureException.class);
				assertThat(session.history(0, 10).events()).isEmpty();
				assertThat(session.history(0, 10).head()).isZero();
			});
	}

	/** A presence store whose writes fail after the events were appended in the same transaction. */
	static final class FailingPresence implements PresenceStore {

		@Override
		public List<PresenceRow> read(String contract, String session, Instant now) {
			return List.of();
		}

		@Override
		public List<PresenceRow> write(String contract, String session, String participant, Map<String, String> values,
				Instant at, Instant expiresAt, Instant now) {
			throw new DataAccessResourceFailureException("the presence table is gone");
		}

		@Override
		public int deleteExpired(Instant before) {
			return 0;
		}

	}

}
