package dev.a2.benchmarks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.store.postgres.PostgresSchema;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A2 beside plain JDBC doing the same writes in the same transactions, on one embedded PostgreSQL
 * with durable commits, in one run. Each figure is the median of rounds that alternate A2 and the
 * baseline, so that the noise of a shared machine falls on both; the ratio is the headline.
 */
public final class Benchmarks {

	static final int WRITERS = 4;

	static final int BATCH = 50;

	static final long WARM_UP_MILLIS = 2_000;

	static final long ROUND_MILLIS = 4_000;

	static final int ROUNDS = 3;

	record Tick(int n, String text) {
	}

	/** What the plain-JDBC baseline inserts: the same row A2 writes for a {@link Tick}. */
	static final String PAYLOAD = "{\"n\": 1, \"text\": \"a message of a typical length for a chat\"}";

	private static final String BASELINE_INSERT = """
			INSERT INTO a2_event (contract, session_id, idx, id, type, payload, created_at, clear_index)
			VALUES ('bench', ?, ?, ?, 'tick', ?::jsonb, now(), 0)""";

	private final DataSource dataSource;

	private final A2Server a2;

	/** Shared by every instance on the database: the baseline writes rows under these names too. */
	private static final AtomicInteger sessions = new AtomicInteger();

	Benchmarks(DataSource dataSource) {
		this.dataSource = dataSource;
		this.a2 = A2Server.builder()
			.dataSource(dataSource)
			.contract(Contract.builder("bench").event("tick", Tick.class).build())
			.build();
	}

	public static void main(String[] args) throws Exception {
		try (EmbeddedPostgres postgres = EmbeddedPostgres.builder()
			.setServerConfig("synchronous_commit", "on")
			.setServerConfig("fsync", "on")
			.setServerConfig("max_connections", "100")
			.start(); HikariDataSource dataSource = new HikariDataSource()) {
			dataSource.setJdbcUrl(postgres.getJdbcUrl("postgres", "postgres"));
			dataSource.setUsername("postgres");
			dataSource.setMaximumPoolSize(24);
			PostgresSchema.migrate(dataSource);
			JdbcClient jdbc = JdbcClient.create(dataSource);
			Table table = new Table(String.format(Locale.ROOT,
					"A2 benchmarks: embedded PostgreSQL %s, synchronous_commit=%s, fsync=%s, %d cores, %d writers, median of %d rounds of %d s",
					jdbc.sql("SHOW server_version").query(String.class).single(),
					jdbc.sql("SHOW synchronous_commit").query(String.class).single(),
					jdbc.sql("SHOW fsync").query(String.class).single(), Runtime.getRuntime().availableProcessors(),
					WRITERS, ROUNDS, ROUND_MILLIS / 1000));
			if (wanted(args, "append")) {
				new Benchmarks(dataSource).run(table);
			}
			if (wanted(args, "drain")) {
				new DrainBenchmarks(dataSource).run(table);
			}
			Table ai = new Table(String.format(Locale.ROOT,
					"AI replies: a scripted model at 50 tokens/s, coalesced (a2.ai defaults: flush 50 ms or 64 tokens) beside a row per token (flush-tokens=1), %d cores",
					Runtime.getRuntime().availableProcessors()), "a row per token");
			if (wanted(args, "ai")) {
				new AiBenchmarks(dataSource, postgres.getJdbcUrl("postgres", "postgres")).run(ai);
			}
			if (wanted(args, "web")) {
				new WebBenchmarks(postgres.getJdbcUrl("postgres", "postgres")).run(table);
			}
			Table axon = new Table(String.format(Locale.ROOT,
					"A2 beside Axon Framework %s (JdbcEventStorageEngine, JdbcTokenStore) on the same database, %d writers, median of %d rounds",
					AxonBenchmarks.VERSION, WRITERS, ROUNDS), "Axon");
			if (wanted(args, "axon")) {
				try (AxonBenchmarks benchmarks = new AxonBenchmarks(dataSource)) {
					benchmarks.run(axon);
				}
			}
			if (!table.isEmpty()) {
				table.print();
			}
			if (!ai.isEmpty()) {
				ai.print();
			}
			if (!axon.isEmpty()) {
				axon.print();
			}
		}
	}

	/** Whether the command line asks for this half: {@code -Dbenchmarks=<name>}, or all of them. */
	private static boolean wanted(String[] args, String name) {
		return args.length == 0 || args[0].isEmpty() || args[0].equals("all") || args[0].equals(name);
	}

	void run(Table table) throws Exception {
		String shared = newSession();
		table.row("append, 1 event per transaction (events/s)",
				compare((stop, w) -> a2Appends(newSession(), 1, stop), (stop, w) -> baselineInserts(1, false, stop)));
		table.row("append, batches of " + BATCH + " (events/s)",
				compare((stop, w) -> a2Appends(newSession(), BATCH, stop), (stop, w) -> baselineInserts(BATCH, false, stop)));
		table.row("append, 1 event per transaction, all writers on one session (events/s)",
				compare((stop, w) -> a2Appends(shared, 1, stop), (stop, w) -> baselineInserts(1, false, stop)));
		// the most one-row durable commits this database takes: one INSERT that commits as it answers
		table.row("append, 1 event per transaction, beside plain JDBC in auto-commit (events/s)",
				compare((stop, w) -> a2Appends(newSession(), 1, stop), (stop, w) -> baselineInserts(1, true, stop)));
	}

	// --- the workloads: each runs until stop is set and answers how many events it wrote

	/** A2 appends of {@code size} events each, to one session. */
	long a2Appends(String sessionId, int size, AtomicBoolean stop) {
		Session session = this.a2.session("bench", sessionId);
		List<NewEvent> batch = Collections.nCopies(size, NewEvent.of("tick", new Tick(1, "a message of a typical length for a chat")));
		long events = 0;
		while (!stop.get()) {
			session.append(batch);
			events += size;
		}
		return events;
	}

	/**
	 * The same rows inserted with plain JDBC, {@code size} per transaction (a JDBC batch when more than
	 * one); in auto-commit mode each statement commits as it answers, with no {@code COMMIT} to send.
	 */
	private long baselineInserts(int size, boolean autoCommit, AtomicBoolean stop) throws SQLException {
		String session = newSession();
		long events = 0;
		try (Connection connection = this.dataSource.getConnection();
				PreparedStatement insert = connection.prepareStatement(BASELINE_INSERT)) {
			connection.setAutoCommit(autoCommit);
			while (!stop.get()) {
				if (size == 1) {
					bind(insert, session, ++events);
					insert.executeUpdate();
				}
				else {
					for (int i = 0; i < size; i++) {
						bind(insert, session, ++events);
						insert.addBatch();
					}
					insert.executeBatch();
				}
				if (!autoCommit) {
					connection.commit();
				}
			}
		}
		return events;
	}

	private static void bind(PreparedStatement insert, String session, long index) throws SQLException {
		insert.setString(1, session);
		insert.setLong(2, index);
		insert.setString(3, UUID.randomUUID().toString());
		insert.setString(4, PAYLOAD);
	}

	String newSession() {
		return "bench-" + sessions.incrementAndGet();
	}

	// --- measuring

	@FunctionalInterface
	interface Workload {

		long run(AtomicBoolean stop, int writer) throws Exception;

	}

	/** Rounds alternating A2 and the baseline; the median rate of each. */
	static double[] compare(Workload a2, Workload baseline) throws Exception {
		rate(a2, WARM_UP_MILLIS);
		rate(baseline, WARM_UP_MILLIS);
		List<Double> a2Rates = new ArrayList<>();
		List<Double> baselineRates = new ArrayList<>();
		for (int round = 0; round < ROUNDS; round++) {
			a2Rates.add(rate(a2, ROUND_MILLIS));
			baselineRates.add(rate(baseline, ROUND_MILLIS));
		}
		return new double[] { median(a2Rates), median(baselineRates) };
	}

	/** Events per second of {@link #WRITERS} threads running {@code workload} for {@code millis}. */
	static double rate(Workload workload, long millis) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(WRITERS);
		try {
			AtomicBoolean stop = new AtomicBoolean();
			CountDownLatch started = new CountDownLatch(WRITERS);
			List<Future<Long>> writers = new ArrayList<>();
			for (int w = 0; w < WRITERS; w++) {
				int writer = w;
				writers.add(executor.submit(() -> {
					started.countDown();
					return workload.run(stop, writer);
				}));
			}
			started.await();
			long start = System.nanoTime();
			Thread.sleep(millis);
			stop.set(true);
			long events = 0;
			for (Future<Long> writer : writers) {
				events += writer.get();
			}
			return events / ((System.nanoTime() - start) / 1e9);
		}
		finally {
			executor.shutdownNow();
		}
	}

	static double median(List<Double> values) {
		List<Double> sorted = new ArrayList<>(values);
		Collections.sort(sorted);
		return sorted.get(sorted.size() / 2);
	}

}
