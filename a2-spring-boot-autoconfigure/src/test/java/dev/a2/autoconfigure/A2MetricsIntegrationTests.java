package dev.a2.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.test.TestPostgres;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The consumer gauges during an outage. A scrape once read the pending work on its own thread and, while
 * PostgreSQL refused connections, waited for the pool's timeout (30 s by default), longer than
 * Prometheus waits for a scrape: the whole target, JVM metrics too, went missing for the outage (found by
 * the observability trial).
 */
class A2MetricsIntegrationTests {

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("metrics", 4);

	private final WithheldConnections connections = new WithheldConnections(this.dataSource);

	private A2Server server;

	private A2Metrics metrics;

	@AfterEach
	void close() {
		this.connections.give();
		if (this.metrics != null) {
			this.metrics.close();
		}
		if (this.server != null) {
			this.server.close();
		}
		this.dataSource.close();
	}

	@Test
	void aScrapeAnswersTheLastValuesReadWithoutWaitingForTheDatabase() throws Exception {
		PostgresSchema.migrate(this.dataSource);
		this.server = A2Server.builder()
			.dataSource(this.connections)
			.contract(Contract.builder("chat").event("said", Said.class).build())
			.consumer(Consumer.builder("chat", "echo").run((context) -> null))
			// its work waits: another instance would run it
			.runConsumers(false)
			.build();
		this.server.session("chat", "waiting").append(NewEvent.of("said", new Said("one")), NewEvent.of("said", new Said("two")));
		// every scrape asks for a new read
		this.metrics = new A2Metrics(this.server, Duration.ZERO);
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		this.metrics.bindTo(registry);
		assertThat(registry.get("a2.consumer.pending").tag("consumer", "echo").gauge().value()).isEqualTo(2);

		// PostgreSQL gives no connection now: a scrape answers what was read last, while the read waits
		this.connections.withhold();
		CompletableFuture<Double> scrape = CompletableFuture
			.supplyAsync(() -> registry.get("a2.consumer.pending").tag("consumer", "echo").gauge().value());
		assertThat(scrape.get(30, TimeUnit.SECONDS)).isEqualTo(2);
		assertThat(this.connections.waiting.await(30, TimeUnit.SECONDS)).as("a read waits for a connection").isTrue();

		// the database is back: the next scrapes see what changed meanwhile
		this.server.session("chat", "waiting").append(NewEvent.of("said", new Said("three")));
		this.connections.give();
		await().atMost(Duration.ofSeconds(30))
			.until(() -> registry.get("a2.consumer.pending").tag("consumer", "echo").gauge().value() == 3);
	}

	record Said(String text) {
	}

	/**
	 * A data source that, while withheld, holds every new request for a connection, as a pool does while
	 * PostgreSQL refuses connections, except on the test's thread, which appends meanwhile.
	 */
	static final class WithheldConnections extends DelegatingDataSource {

		private final Thread test = Thread.currentThread();

		private volatile CountDownLatch given = new CountDownLatch(0);

		final CountDownLatch waiting = new CountDownLatch(1);

		WithheldConnections(HikariDataSource dataSource) {
			super(dataSource);
		}

		void withhold() {
			this.given = new CountDownLatch(1);
		}

		void give() {
			this.given.countDown();
		}

		@Override
		public Connection getConnection() throws SQLException {
			CountDownLatch given = this.given;
			if (Thread.currentThread() != this.test && given.getCount() > 0) {
				this.waiting.countDown();
				try {
					given.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new SQLException("interrupted while waiting for a connection", ex);
				}
			}
			return super.getConnection();
		}

	}

}
