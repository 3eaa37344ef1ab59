package dev.a2.store.postgres;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class PostgresSchemaIntegrationTests {

	@Test
	void appliesEachMigrationOnceAndRecordsItInItsOwnHistoryTable() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("schema", 2)) {
			assertThat(PostgresSchema.migrate(dataSource)).isEqualTo(PostgresSchema.migrations().size());
			assertThat(PostgresSchema.migrate(dataSource)).isZero();
			JdbcClient jdbc = JdbcClient.create(dataSource);
			assertThat(jdbc.sql("SELECT version FROM a2_schema_history ORDER BY version").query(Integer.class).list())
				.startsWith(1);
			assertThat(jdbc.sql("SELECT count(*) FROM a2_event").query(Long.class).single()).isZero();
		}
	}

	@Test
	void instancesStartingTogetherMigrateOnce() throws Exception {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("schema", 4)) {
			ExecutorService executor = Executors.newFixedThreadPool(4);
			try {
				List<Future<Integer>> applied = new ArrayList<>();
				for (int i = 0; i < 4; i++) {
					applied.add(executor.submit(() -> PostgresSchema.migrate(dataSource)));
				}
				int total = 0;
				for (Future<Integer> count : applied) {
					total += count.get();
				}
				assertThat(total).isEqualTo(PostgresSchema.migrations().size());
			}
			finally {
				executor.shutdownNow();
			}
		}
	}

	@Test
	void aChangedMigrationIsAnError() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("schema", 2)) {
			PostgresSchema.migrate(dataSource);
			JdbcClient.create(dataSource).sql("UPDATE a2_schema_history SET checksum = 'edited' WHERE version = 1").update();
			assertThatIllegalStateException().isThrownBy(() -> PostgresSchema.migrate(dataSource))
				.withMessageContaining("A2 migration V1 (sessions events snapshots) has changed since it was applied");
		}
	}

}
