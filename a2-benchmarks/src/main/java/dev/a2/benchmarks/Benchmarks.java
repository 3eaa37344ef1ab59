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

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * A2 beside plain JDBC doing the same writes in the same transactions, on one embedded PostgreSQL
 * with durable commits, in one run. Each figure is the median of rounds that alternate A2 and the
 * baseline, so that the noise of a shared machine falls on both; the ratio is the headline.
 */
public final class Benchmarks {

	static final int WRITERS = 4;

	static final int BATCH = 50;

	/** The concurrency of the rows that measure group commit across sessions. */
	static final int[] CONCURRENT_WRITERS = { 4, 64, 256 };

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
		// another database, such as a Citus coordinator, for a run of its own (figures on the embedded one are the reference)
		String external = System.getenv("A2_BENCH_JDBC_URL");
		try (EmbeddedPostgres postgres = (external != null) ? null : EmbeddedPostgres.builder()
			.setServerConfig("synchronous_commit", "on")
			.setServerConfig("fsync", "on")
			.setServerConfig("max_connections", "100")
			.start(); HikariDataSource dataSource = new HikariDataSource()) {
			String url = (external != null) ? external : postgres.getJdbcUrl("postgres", "postgres");
			dataSource.setJdbcUrl(url);
			dataSource.setUsername("postgres");
			dataSource.setMaximumPoolSize(24);
			PostgresSchema.migrate(dataSource);
			JdbcClient jdbc = JdbcClient.create(dataSource);
			Table table = new Table(String.format(Locale.ROOT,
					"A2 benchmarks: PostgreSQL %s, synchronous_commit=%s, fsync=%s, %d cores, %d writers, median of %d rounds of %d s",
					jdbc.sql("SHOW server_version").query(String.class).single(),
					jdbc.sql("SHOW synchronous_commit").query(String.class).single(),
					jdbc.sql("SHOW fsync").query(String.class).single(), Runtime.getRuntime().availableProcessors(),
					WRITERS, ROUNDS, ROUND_MILLIS / 1000));
			if (wanted(args, "append")) {
				new Benchmarks(dataSource).run(table, ProcessCpu.of(url));
			}
			if (wanted(args, "drain")) {
				new DrainBenchmarks(dataSource).run(table);
			}
			Table ai = new Table(String.format(Locale.ROOT,
					"AI replies: a scripted model at 50 tokens/s, coalesced (a2.ai defaults: flush 50 ms or 64 tokens) beside a row per token (flush-tokens=1), %d cores",
					Runtime.getRuntime().availableProcessors()), "a row per token");
			if (wanted(args, "ai")) {
				new AiBenchmarks(dataSource, url).run(ai);
			}
			if (wanted(args, "web")) {
				new WebBenchmarks(url).run(table);
			}
			if (wanted(args, "mvc")) {
				new WebBenchmarks(url).runMvc(table);
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

	void run(Table table, ProcessCpu cpu) throws Exception {
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
		// many concurrent writers, each on a session of its own, as many conversations streaming at once:
		// the baseline borrows a pooled connection per insert, as a server's request would
		for (int writers : CONCURRENT_WRITERS) {
			Workload a2 = (stop, w) -> a2Appends(newSession(), 1, stop);
			Workload baseline = (stop, w) -> pooledInserts(stop);
			table.row("append, 1 event per append, " + writers + " writers on " + writers
					+ " sessions, beside plain JDBC in auto-commit (events/s)", compare(a2, baseline, writers));
			// what group commit saves: the durable flushes of the write-ahead log, one per commit at best,
			// and the CPU of an event, which bounds the rate where the writers, A2 and PostgreSQL share the cores
			RoundCost a2Cost = cost(a2, writers, cpu);
			RoundCost baselineCost = cost(baseline, writers, cpu);
			table.row("the same, events per flush of the write-ahead log", String.format(Locale.ROOT, "%.1f", a2Cost.perFlush()),
					String.format(Locale.ROOT, "%.1f", baselineCost.perFlush()),
					String.format(Locale.ROOT, "%.2f", a2Cost.perFlush() / baselineCost.perFlush()));
			table.row("the same, CPU per event: this JVM + PostgreSQL (µs) [ratio: baseline's over A2's]", a2Cost.cpu(),
					baselineCost.cpu(), String.format(Locale.ROOT, "%.2f", baselineCost.cpuMicros() / a2Cost.cpuMicros()));
		}
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

	/**
	 * One row per auto-committed {@code INSERT}, on a connection borrowed from the pool for each, as
	 * a hand-written endpoint would do it; for more writers than the pool has connections.
	 */
	private long pooledInserts(AtomicBoolean stop) throws SQLException {
		String session = newSession();
		long events = 0;
		while (!stop.get()) {
			try (Connection connection = this.dataSource.getConnection();
					PreparedStatement insert = connection.prepareStatement(BASELINE_INSERT)) {
				connection.setAutoCommit(true);
				bind(insert, session, ++events);
				insert.executeUpdate();
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

	/**
	 * Events written per flush of the write-ahead log to disk in one round, and the CPU each took in
	 * this JVM and in PostgreSQL: where commits wait for the disk, the rate follows the first more than
	 * the CPU ({@code pg_stat_wal.wal_sync}, PostgreSQL 14 to 17; NaN where it is missing).
	 */
	private RoundCost cost(Workload workload, int writers, ProcessCpu cpu) throws Exception {
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		String flushes = "SELECT wal_sync FROM pg_stat_wal";
		Long before;
		try {
			before = jdbc.sql(flushes).query(Long.class).single();
		}
		catch (DataAccessException ex) {
			before = null;
		}
		ProcessCpu.Sample cpuBefore = cpu.now();
		long events = run(workload, ROUND_MILLIS, writers)[0];
		ProcessCpu.Sample perEvent = cpu.now().since(cpuBefore, events);
		double perFlush = (before != null)
				? (double) events / Math.max(1, jdbc.sql(flushes).query(Long.class).single() - before) : Double.NaN;
		return new RoundCost(perFlush, perEvent.jvmMillis() * 1000, perEvent.postgresMillis() * 1000);
	}

	/** What a round of a workload cost: events per flush of the write-ahead log, and CPU per event. */
	private record RoundCost(double perFlush, double jvmMicros, double postgresMicros) {

		double cpuMicros() {
			return this.jvmMicros + this.postgresMicros;
		}

		String cpu() {
			return String.format(Locale.ROOT, "%.1f + %.1f", this.jvmMicros, this.postgresMicros);
		}

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
		return compare(a2, baseline, WRITERS);
	}

	/** The same with {@code writers} threads on each side. */
	static double[] compare(Workload a2, Workload baseline, int writers) throws Exception {
		rate(a2, WARM_UP_MILLIS, writers);
		rate(baseline, WARM_UP_MILLIS, writers);
		List<Double> a2Rates = new ArrayList<>();
		List<Double> baselineRates = new ArrayList<>();
		for (int round = 0; round < ROUNDS; round++) {
			a2Rates.add(rate(a2, ROUND_MILLIS, writers));
			baselineRates.add(rate(baseline, ROUND_MILLIS, writers));
		}
		return new double[] { median(a2Rates), median(baselineRates) };
	}

	/** Events per second of {@link #WRITERS} threads running {@code workload} for {@code millis}. */
	static double rate(Workload workload, long millis) throws Exception {
		return rate(workload, millis, WRITERS);
	}

	/** Events per second of {@code count} threads running {@code workload} for {@code millis}. */
	static double rate(Workload workload, long millis, int count) throws Exception {
		long[] run = run(workload, millis, count);
		return run[0] / (run[1] / 1e9);
	}

	/** The events written by {@code count} threads running {@code workload} for {@code millis}, and the nanoseconds taken. */
	static long[] run(Workload workload, long millis, int count) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(count);
		try {
			AtomicBoolean stop = new AtomicBoolean();
			CountDownLatch started = new CountDownLatch(count);
			List<Future<Long>> writers = new ArrayList<>();
			for (int w = 0; w < count; w++) {
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
			return new long[] { events, System.nanoTime() - start };
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
