package dev.a2;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.test.MutableClock;
import dev.a2.test.TestPostgres;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Servers with consumers for the drain tests, on a schema of each test's own (sweeps look across the
 * whole database): one clock the test moves, so only the test decides when leases lapse and
 * back-offs pass.
 */
final class DrainTestSupport implements AutoCloseable {

	static final Duration LEASE = Duration.ofSeconds(30);

	final HikariDataSource dataSource;

	final MutableClock clock = new MutableClock();

	final TestObservationRegistry observations = TestObservationRegistry.create();

	/**
	 * Observations made but kept nowhere, for tests of thousands of runs: the test registry keeps every
	 * observation and looks each one up among all it kept when it stops, a cost that grows with the
	 * square of the runs and, at 20,000 of them, took most of the CPU the drain was measured on.
	 */
	private final ObservationRegistry unrecorded = ObservationRegistry.create();

	private final List<A2Server> servers = new ArrayList<>();

	DrainTestSupport(String owner) {
		this.unrecorded.observationConfig().observationHandler((context) -> true);
		this.dataSource = TestPostgres.newSchemaDataSource(owner, 20);
		PostgresSchema.migrate(this.dataSource);
	}

	A2Server server(Consumer... consumers) {
		return server(DrainSettings.DEFAULTS.withLease(LEASE).withRetry(Duration.ofSeconds(1), Duration.ofMinutes(5)),
				consumers);
	}

	A2Server server(DrainSettings settings, Consumer... consumers) {
		return server(settings, DrainScheduling.AUTOMATIC, consumers);
	}

	/**
	 * A server whose heartbeats run only when the test calls them: for tests that stall an attempt
	 * and let the clock take its lease, which a heartbeat on real time could renew behind their back.
	 */
	A2Server manualServer(Consumer... consumers) {
		return server(DrainSettings.DEFAULTS.withLease(LEASE), DrainScheduling.MANUAL, consumers);
	}

	A2Server server(DrainSettings settings, DrainScheduling scheduling, Consumer... consumers) {
		return server(settings, scheduling, this.observations, consumers);
	}

	/** A server whose observations are made but not recorded ({@link #unrecorded}). */
	A2Server unrecordedServer(Consumer... consumers) {
		return server(DrainSettings.DEFAULTS.withLease(LEASE).withRetry(Duration.ofSeconds(1), Duration.ofMinutes(5)),
				DrainScheduling.AUTOMATIC, this.unrecorded, consumers);
	}

	private A2Server server(DrainSettings settings, DrainScheduling scheduling, ObservationRegistry observations,
			Consumer... consumers) {
		A2Server.Builder builder = A2TestSupport.server(this.dataSource)
			.drainScheduling(scheduling)
			.clock(this.clock)
			.observationRegistry(observations)
			.drain(settings)
			.stopGrace(Duration.ofSeconds(5));
		for (Consumer consumer : consumers) {
			builder.consumer(consumer);
		}
		A2Server server = builder.build();
		this.servers.add(server);
		return server;
	}

	JdbcClient jdbc() {
		return JdbcClient.create(this.dataSource);
	}

	/** Events of a session of one type, with their payload text, in index order. */
	List<String> ids(String session, String type) {
		return jdbc().sql("SELECT id FROM a2_event WHERE session_id = ? AND type = ? ORDER BY idx")
			.params(session, type)
			.query(String.class)
			.list();
	}

	long count(String sql, Object... params) {
		return jdbc().sql(sql).params(params).query(Long.class).single();
	}

	@Override
	public void close() {
		for (A2Server server : this.servers) {
			server.halt();
		}
		this.dataSource.close();
	}

}
