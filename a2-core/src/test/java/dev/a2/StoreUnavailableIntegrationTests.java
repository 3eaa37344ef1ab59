package dev.a2;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.test.PostgresExtension;
import dev.a2.test.TestPostgres;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.jdbc.core.simple.JdbcClient;

import static dev.a2.TestContracts.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * When PostgreSQL goes away, callers get {@code STORE_UNAVAILABLE} and no write is half done.
 */
@ExtendWith(PostgresExtension.class)
class StoreUnavailableIntegrationTests {

	@Test
	void connectionLostInTheMiddleOfABatchStoresNothing(DataSource dataSource) {
		// on Citus the rows are inserted by a worker's backend, and triggers on distributed tables are off
		assumeFalse(A2TestSupport.onCitus(dataSource), "a trigger that ends the appending backend, on one PostgreSQL");
		// the server ends the connection of the append itself, between two inserted rows
		JdbcClient.create(dataSource).sql("""
				CREATE FUNCTION crash_on_request() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
				    IF NEW.payload->>'text' = 'crash' THEN
				        PERFORM pg_terminate_backend(pg_backend_pid());
				        PERFORM pg_sleep(5);
				    END IF;
				    RETURN NEW;
				END $$;
				CREATE TRIGGER crash_on_request BEFORE INSERT ON a2_event FOR EACH ROW EXECUTE FUNCTION crash_on_request();
				""").update();
		Session session = A2TestSupport.server(dataSource).build().session("chat", A2TestSupport.newSessionId());
		session.append(message("before"));

		// the connection broke while the statement ran: the caller cannot know whether it committed
		assertUnavailable(() -> session.append(message("one"), message("two"), message("crash"), message("four")),
				"a write may or may not be stored; try again later with the same ids, which stores nothing twice");

		assertThat(A2TestSupport.rows(dataSource, session.id())).isEqualTo(1);
		assertThat(session.append(message("after")).get(0).index()).isEqualTo(2);
	}

	@Test
	void stoppedDatabaseAnswersStoreUnavailableAndKeepsWhatWasCommitted(@TempDir Path data) throws IOException {
		EmbeddedPostgres postgres = EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).start();
		int port = postgres.getPort();
		try (HikariDataSource dataSource = dataSource(port)) {
			PostgresSchema.migrate(dataSource);
			Session session = A2TestSupport.server(dataSource).build().session("chat", "stopping");
			session.append(message("kept"));

			postgres.close();
			assertUnavailable(() -> session.append(message("lost"), message("lost too")));
			assertUnavailable(() -> session.history(0, 10));
			assertUnavailable(() -> session.state("count"));
			assertUnavailable(session::clear);

			postgres = EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).setPort(port).start();
			// the pool reconnects in its own time
			await().atMost(Duration.ofSeconds(30))
				.ignoreExceptionsMatching((ex) -> ex instanceof A2Exception a2 && a2.code() == ErrorCode.STORE_UNAVAILABLE)
				.untilAsserted(() -> assertThat(session.history(0, 10).events()).extracting(Event::index).containsExactly(1L));
			assertThat(session.append(message("back")).get(0).index()).isEqualTo(2);
		}
		finally {
			postgres.close();
		}
	}

	@Test
	void exhaustedPoolAnswersStoreUnavailableInsteadOfWaitingForever() throws SQLException {
		try (HikariDataSource pool = TestPostgres.newSchemaDataSource("exhausted_pool", 2)) {
			pool.setConnectionTimeout(500);
			PostgresSchema.migrate(pool);
			Session session = A2TestSupport.server(pool).build().session("chat", "exhausted");
			List<Connection> taken = new ArrayList<>();
			try {
				taken.add(pool.getConnection());
				taken.add(pool.getConnection());
				// the pool's own wait, not a hang: the deadline only guards against waiting for ever
				// no connection, no statement: certainly nothing was stored
				assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
					assertUnavailable(() -> session.append(message("waits")), "nothing was changed, try again later");
					assertUnavailable(() -> session.history(0, 10), "nothing was changed");
				});
			}
			finally {
				for (Connection connection : taken) {
					connection.close();
				}
			}
			assertThat(session.append(message("lands")).get(0).index()).isEqualTo(1);
		}
	}

	private static HikariDataSource dataSource(int port) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl("jdbc:postgresql://localhost:" + port + "/postgres");
		config.setUsername("postgres");
		config.setConnectionTimeout(1_000);
		config.setMaximumPoolSize(2);
		return new HikariDataSource(config);
	}

	private static void assertUnavailable(ThrowingCallable call) {
		assertUnavailable(call, "");
	}

	private static void assertUnavailable(ThrowingCallable call, String saying) {
		assertThatThrownBy(call).isInstanceOf(A2Exception.class)
			.hasMessageContaining("PostgreSQL cannot be reached")
			.hasMessageContaining(saying)
			.hasMessageNotContaining("(null)")
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.STORE_UNAVAILABLE);
	}

}
