package dev.a2.benchmarks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.Lane;
import dev.a2.NewEvent;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Consumer runs per second over many sessions, beside plain JDBC doing the same claim and complete
 * one unit at a time (two transactions per unit); and the latency from an append to the start of
 * the run it causes.
 */
final class DrainBenchmarks {

	static final int SESSIONS = 1000;

	static final int EVENTS_PER_SESSION = 20;

	private final DataSource dataSource;

	private final JdbcClient jdbc;

	private final Contract contract = Contract.builder("drain").event("tick", Benchmarks.Tick.class).build();

	private final AtomicInteger rounds = new AtomicInteger();

	DrainBenchmarks(DataSource dataSource) {
		this.dataSource = dataSource;
		this.jdbc = JdbcClient.create(dataSource);
	}

	void run(Table table) throws Exception {
		table.row("no-op consumer runs over " + SESSIONS + " sessions, independent lane (runs/s)",
				compare(Lane.independent(), false));
		table.row("no-op consumer runs over " + SESSIONS + " sessions, fixed lane (runs/s)", compare(Lane.fixed("projection"), true));
		double[] latency = latencyMillis();
		table.row("append to run start, 200 appends/s over 100 sessions",
				String.format(Locale.ROOT, "p50 %.1f ms, p99 %.1f ms", latency[0], latency[1]));
		table.row("fixed-lane cursor reading 100,000 appended events in 10 sessions (events/s)", rate(streaming(false)));
		table.row("fixed-lane batch projection reading 100,000 appended events in 10 sessions (events/s)", rate(streaming(true)));
	}

	private static String rate(double eventsPerSecond) {
		return String.format(Locale.ROOT, "%,.0f", eventsPerSecond);
	}

	/**
	 * The peer measurement (Axon's streaming processors read what was appended): a cursor per session.
	 * Events per second from the start of the draining instance to the last cursor committed.
	 */
	double streaming(boolean batches) throws Exception {
		String consumerName = "stream-" + this.rounds.incrementAndGet();
		Consumer.Builder builder = Consumer.builder("drain", consumerName).lane(Lane.fixed("projection"));
		Consumer noop = batches ? builder.runBatch((batch) -> null) : builder.run((context) -> null);
		try (A2Server writer = server(noop, false)) {
			List<NewEvent> batch = Collections.nCopies(1000, NewEvent.of("tick", new Benchmarks.Tick(1, "work")));
			for (int s = 0; s < 10; s++) {
				for (int b = 0; b < 10; b++) {
					writer.session("drain", consumerName + "-" + s).append(batch);
				}
			}
		}
		try (A2Server drainer = server(noop, true)) {
			long start = System.nanoTime();
			drainer.sweep();
			while (remaining(consumerName, true) > 0) {
				Thread.sleep(5);
				drainer.sweep();
			}
			return 100_000 / ((System.nanoTime() - start) / 1e9);
		}
	}

	private double[] compare(Lane lane, boolean cursor) throws Exception {
		drainRate(lane, cursor);
		baselineRate(lane, cursor);
		List<Double> a2 = new ArrayList<>();
		List<Double> baseline = new ArrayList<>();
		for (int round = 0; round < Benchmarks.ROUNDS; round++) {
			a2.add(drainRate(lane, cursor));
			baseline.add(baselineRate(lane, cursor));
		}
		return new double[] { Benchmarks.median(a2), Benchmarks.median(baseline) };
	}

	/** Appends the work with an instance that runs no consumers, then times another draining it all. */
	private double drainRate(Lane lane, boolean cursor) throws Exception {
		String consumerName = "noop-" + this.rounds.incrementAndGet();
		Consumer noop = Consumer.builder("drain", consumerName).lane(lane).run((context) -> null);
		prepare(noop);
		try (A2Server drainer = server(noop, true)) {
			long start = System.nanoTime();
			drainer.sweep();
			while (remaining(consumerName, cursor) > 0) {
				Thread.sleep(5);
				drainer.sweep();
			}
			return SESSIONS * EVENTS_PER_SESSION / ((System.nanoTime() - start) / 1e9);
		}
	}

	/** The same units, each claimed in one transaction and completed in another, by four workers. */
	private double baselineRate(Lane lane, boolean cursor) throws Exception {
		String consumerName = "baseline-" + this.rounds.incrementAndGet();
		prepare(Consumer.builder("drain", consumerName).lane(lane).run((context) -> null));
		ExecutorService workers = Executors.newFixedThreadPool(Benchmarks.WRITERS);
		try {
			long start = System.nanoTime();
			List<Future<?>> done = new ArrayList<>();
			for (int w = 0; w < Benchmarks.WRITERS; w++) {
				done.add(workers.submit(() -> {
					baselineWorker(consumerName, cursor);
					return null;
				}));
			}
			for (Future<?> worker : done) {
				worker.get();
			}
			return SESSIONS * EVENTS_PER_SESSION / ((System.nanoTime() - start) / 1e9);
		}
		finally {
			workers.shutdownNow();
		}
	}

	private static final String BASELINE_CLAIM_UNIT = """
			UPDATE a2_work w SET attempt = w.attempt + 1, claim = gen_random_uuid(), lease_until = ?
			WHERE (w.contract, w.session_id, w.consumer, w.idx) = (
			    SELECT contract, session_id, consumer, idx FROM a2_work
			    WHERE consumer = ? AND claim IS NULL LIMIT 1 FOR UPDATE SKIP LOCKED)
			RETURNING w.contract, w.session_id, w.idx, w.claim""";

	private static final String BASELINE_COMPLETE_UNIT = """
			DELETE FROM a2_work WHERE contract = ? AND session_id = ? AND consumer = ? AND idx = ? AND claim = ?""";

	private static final String BASELINE_CLAIM_CURSOR = """
			UPDATE a2_cursor k SET attempt = k.attempt + 1, claim = gen_random_uuid(), lease_until = ?
			WHERE (k.contract, k.session_id, k.consumer) = (
			    SELECT contract, session_id, consumer FROM a2_cursor
			    WHERE consumer = ? AND claim IS NULL AND position < target LIMIT 1 FOR UPDATE SKIP LOCKED)
			RETURNING k.contract, k.session_id, k.position + 1 AS idx, k.claim""";

	private static final String BASELINE_COMPLETE_CURSOR = """
			UPDATE a2_cursor SET position = ?, claim = NULL, lease_until = NULL
			WHERE contract = ? AND session_id = ? AND consumer = ? AND claim = ?""";

	private void baselineWorker(String consumer, boolean cursor) throws SQLException {
		try (Connection connection = this.dataSource.getConnection();
				PreparedStatement claim = connection.prepareStatement(cursor ? BASELINE_CLAIM_CURSOR : BASELINE_CLAIM_UNIT);
				PreparedStatement complete = connection.prepareStatement(cursor ? BASELINE_COMPLETE_CURSOR : BASELINE_COMPLETE_UNIT)) {
			connection.setAutoCommit(false);
			while (true) {
				claim.setObject(1, OffsetDateTime.now(ZoneOffset.UTC).plusSeconds(30));
				claim.setString(2, consumer);
				String contract;
				String session;
				long index;
				Object token;
				try (ResultSet claimed = claim.executeQuery()) {
					if (!claimed.next()) {
						connection.commit();
						return;
					}
					contract = claimed.getString(1);
					session = claimed.getString(2);
					index = claimed.getLong(3);
					token = claimed.getObject(4);
				}
				connection.commit();
				if (cursor) {
					complete.setLong(1, index);
					complete.setString(2, contract);
					complete.setString(3, session);
					complete.setString(4, consumer);
					complete.setObject(5, token);
				}
				else {
					complete.setString(1, contract);
					complete.setString(2, session);
					complete.setString(3, consumer);
					complete.setLong(4, index);
					complete.setObject(5, token);
				}
				complete.executeUpdate();
				connection.commit();
			}
		}
	}

	/** Appends {@link #EVENTS_PER_SESSION} events to each of {@link #SESSIONS} fresh sessions, creating the work. */
	private void prepare(Consumer consumer) {
		try (A2Server writer = server(consumer, false)) {
			List<NewEvent> batch = Collections.nCopies(EVENTS_PER_SESSION, NewEvent.of("tick", new Benchmarks.Tick(1, "work")));
			for (int s = 0; s < SESSIONS; s++) {
				writer.session("drain", consumer.name() + "-" + s).append(batch);
			}
		}
	}

	private long remaining(String consumer, boolean cursor) {
		return this.jdbc.sql(cursor ? "SELECT count(*) FROM a2_cursor WHERE consumer = ? AND position < target"
				: "SELECT count(*) FROM a2_work WHERE consumer = ?").param(consumer).query(Long.class).single();
	}

	private A2Server server(Consumer consumer, boolean runConsumers) {
		return A2Server.builder()
			.dataSource(this.dataSource)
			.contract(this.contract)
			.consumer(consumer)
			.runConsumers(runConsumers)
			.build();
	}

	/** Appends at a steady 200/s over 100 sessions and answers p50 and p99 of append start to run start, in ms. */
	double[] latencyMillis() throws Exception {
		Map<String, Long> appendedAt = new ConcurrentHashMap<>();
		List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
		// fresh sessions and ids each call: an id the session already has would not be appended again
		String round = "timed-" + this.rounds.incrementAndGet();
		Consumer timed = Consumer.builder("drain", round).run((context) -> {
			Long start = appendedAt.get(context.event().id());
			if (start != null) {
				latencies.add(System.nanoTime() - start);
			}
			return null;
		});
		try (A2Server server = server(timed, true)) {
			int total = 2000;
			long interval = TimeUnit.SECONDS.toNanos(1) / 200;
			long next = System.nanoTime();
			for (int i = 0; i < total; i++) {
				String id = round + "-" + i;
				appendedAt.put(id, System.nanoTime());
				server.session("drain", round + "-latency-" + (i % 100)).append(NewEvent.of("tick", new Benchmarks.Tick(i, "x"), id));
				next += interval;
				long wait = next - System.nanoTime();
				if (wait > 0) {
					TimeUnit.NANOSECONDS.sleep(wait);
				}
			}
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (latencies.size() < total && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
		}
		List<Long> sorted = new ArrayList<>(latencies);
		Collections.sort(sorted);
		// the first second warms the JIT and the pools: leave it out
		List<Long> steady = sorted.isEmpty() ? sorted : new ArrayList<>(latencies.subList(Math.min(200, latencies.size()), latencies.size()));
		Collections.sort(steady);
		return new double[] { percentile(steady, 50) / 1e6, percentile(steady, 99) / 1e6 };
	}

	static double percentile(List<Long> sorted, int percent) {
		if (sorted.isEmpty()) {
			return Double.NaN;
		}
		int index = (int) Math.ceil(percent / 100.0 * sorted.size()) - 1;
		return sorted.get(Math.max(0, Math.min(index, sorted.size() - 1)));
	}

}
