package dev.a2.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import javax.sql.DataSource;

import org.axonframework.common.jdbc.ConnectionProvider;
import org.axonframework.common.jdbc.ConnectionWrapperFactory;
import org.axonframework.common.transaction.Transaction;
import org.axonframework.common.transaction.TransactionManager;
import org.axonframework.eventhandling.DomainEventMessage;
import org.axonframework.eventhandling.EventMessageHandler;
import org.axonframework.eventhandling.GenericDomainEventMessage;
import org.axonframework.eventhandling.SimpleEventHandlerInvoker;
import org.axonframework.eventhandling.StreamingEventProcessor;
import org.axonframework.eventhandling.TrackingEventProcessor;
import org.axonframework.eventhandling.TrackingEventProcessorConfiguration;
import org.axonframework.eventhandling.TrackingToken;
import org.axonframework.eventhandling.pooled.PooledStreamingEventProcessor;
import org.axonframework.eventhandling.tokenstore.jdbc.JdbcTokenStore;
import org.axonframework.eventhandling.tokenstore.jdbc.PostgresTokenTableFactory;
import org.axonframework.eventsourcing.eventstore.EmbeddedEventStore;
import org.axonframework.eventsourcing.eventstore.jdbc.JdbcEventStorageEngine;
import org.axonframework.eventsourcing.eventstore.jdbc.PostgresEventTableFactory;
import org.axonframework.messaging.unitofwork.CurrentUnitOfWork;
import org.axonframework.messaging.unitofwork.DefaultUnitOfWork;
import org.axonframework.serialization.Serializer;
import org.axonframework.serialization.json.JacksonSerializer;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;

/**
 * A2 beside Axon Framework 4, the event store Spring users most often weigh it against, on the same
 * embedded PostgreSQL in the same run, rounds alternating so that the noise falls on both.
 * <p>
 * Axon is set up the way an Axon application on Spring with JDBC runs: {@link JdbcEventStorageEngine}
 * under an {@link EmbeddedEventStore}, events published inside a {@link DefaultUnitOfWork} with a
 * transaction attached (what Axon's {@code TransactionManagingInterceptor} does around a command
 * handler), a {@link JdbcTokenStore} for the processors, Jackson for payloads. No aggregate is loaded
 * before its events are appended, so this is the cheapest write Axon offers, not a full command.
 * <p>
 * Axon's Spring glue lives in {@code axon-spring}, which this classpath leaves out: only
 * {@code axon-messaging} and {@code axon-eventsourcing} are used, and the two small adapters that
 * module would supply ({@code SpringTransactionManager} and {@code SpringDataSourceConnectionProvider})
 * are written out below over the same {@link DataSourceTransactionManager} A2 uses, so both commit
 * through the same Spring transaction code.
 */
final class AxonBenchmarks implements AutoCloseable {

	static final String VERSION = "4.13.0";

	static final int STREAMED = 100_000;

	/** Axon's processors default to batches of one event per transaction; 100 is what its guides suggest for throughput. */
	static final int PROCESSOR_BATCH = 100;

	/** What Axon's configuration API gives a pooled streaming processor: 16 segments, 4 worker threads. */
	static final int POOLED_SEGMENTS = 16;

	static final int POOLED_WORKERS = 4;

	private static final Benchmarks.Tick TICK = new Benchmarks.Tick(1, "a message of a typical length for a chat");

	private final Benchmarks a2Appends;

	private final DrainBenchmarks a2Drain;

	private final TransactionManager transactions;

	private final JdbcEventStorageEngine storage;

	private final EmbeddedEventStore eventStore;

	private final JdbcTokenStore tokens;

	private final AtomicInteger names = new AtomicInteger();

	AxonBenchmarks(DataSource dataSource) {
		this.a2Appends = new Benchmarks(dataSource);
		this.a2Drain = new DrainBenchmarks(dataSource);
		this.transactions = springTransactions(new DataSourceTransactionManager(dataSource));
		ConnectionProvider connections = springConnections(dataSource);
		Serializer serializer = JacksonSerializer.defaultSerializer();
		this.storage = JdbcEventStorageEngine.builder()
			.connectionProvider(connections)
			.transactionManager(this.transactions)
			.eventSerializer(serializer)
			.snapshotSerializer(serializer)
			.build();
		this.storage.createSchema(PostgresEventTableFactory.INSTANCE);
		this.eventStore = EmbeddedEventStore.builder().storageEngine(this.storage).build();
		this.tokens = JdbcTokenStore.builder().connectionProvider(connections).serializer(serializer).build();
		this.tokens.createSchema(PostgresTokenTableFactory.INSTANCE);
	}

	void run(Table table) throws Exception {
		table.row("append, 1 event per transaction, " + Benchmarks.WRITERS + " writers (events/s)",
				Benchmarks.compare((stop, w) -> this.a2Appends.a2Appends(this.a2Appends.newSession(), 1, stop),
						(stop, w) -> axonAppends(1, stop)));
		table.row("append, batches of " + Benchmarks.BATCH + ", " + Benchmarks.WRITERS + " writers (events/s)",
				Benchmarks.compare((stop, w) -> this.a2Appends.a2Appends(this.a2Appends.newSession(), Benchmarks.BATCH, stop),
						(stop, w) -> axonAppends(Benchmarks.BATCH, stop)));
		streaming(table);
		latency(table);
	}

	// --- appends

	/** One writer publishing {@code size} events per unit of work for an aggregate of its own. */
	private long axonAppends(int size, AtomicBoolean stop) {
		String aggregate = "axon-" + this.names.incrementAndGet();
		long sequence = 0;
		while (!stop.get()) {
			List<DomainEventMessage<?>> batch = new ArrayList<>(size);
			for (int i = 0; i < size; i++) {
				batch.add(new GenericDomainEventMessage<>("tick", aggregate, sequence++, TICK));
			}
			publish(batch);
		}
		return sequence;
	}

	/** As a command handler's events are stored: staged in the unit of work, appended and committed as it commits. */
	private void publish(List<DomainEventMessage<?>> events) {
		DefaultUnitOfWork<?> unitOfWork = DefaultUnitOfWork.startAndGet(null);
		unitOfWork.attachTransaction(this.transactions);
		this.eventStore.publish(events);
		unitOfWork.commit();
	}

	// --- streaming 100,000 appended events

	/**
	 * A2's fixed-lane cursor over 10 sessions beside each of Axon's streaming processors over 10
	 * aggregates, each reading only the 100,000 events appended for it, from its start to the last
	 * event's batch committed.
	 */
	private void streaming(Table table) throws Exception {
		List<Double> a2 = new ArrayList<>();
		List<Double> tracking = new ArrayList<>();
		List<Double> pooled = new ArrayList<>();
		// a first drain of each warms the JIT and the caches, as compare's warm-up does: left out
		this.a2Drain.streaming(false);
		axonStreaming(false);
		axonStreaming(true);
		for (int round = 0; round < Benchmarks.ROUNDS; round++) {
			a2.add(this.a2Drain.streaming(false));
			tracking.add(axonStreaming(false));
			pooled.add(axonStreaming(true));
		}
		// one drain of 100,000 events takes a second or two, so a round is short and noisy: show them all
		System.out.println("  streaming rounds (events/s): A2 " + a2 + ", tracking " + tracking + ", pooled " + pooled);
		table.row("reading 100,000 appended events in 10 sessions: A2 fixed-lane cursor vs TrackingEventProcessor, batch "
				+ PROCESSOR_BATCH + " (events/s)", new double[] { Benchmarks.median(a2), Benchmarks.median(tracking) });
		table.row("reading 100,000 appended events in 10 sessions: A2 fixed-lane cursor vs PooledStreamingEventProcessor, "
				+ POOLED_SEGMENTS + " segments, " + POOLED_WORKERS + " workers, batch " + PROCESSOR_BATCH + " (events/s)",
				new double[] { Benchmarks.median(a2), Benchmarks.median(pooled) });
	}

	private double axonStreaming(boolean pooled) throws Exception {
		String name = "stream-" + this.names.incrementAndGet();
		// the processor starts where the store ends now, so it reads exactly the events appended next
		TrackingToken start = this.storage.createHeadToken();
		List<DomainEventMessage<?>> batch = new ArrayList<>(1000);
		for (int a = 0; a < 10; a++) {
			String aggregate = name + "-" + a;
			for (int b = 0; b < 100; b++) {
				batch.clear();
				for (int i = 0; i < 1000; i++) {
					batch.add(new GenericDomainEventMessage<>("tick", aggregate, b * 1000L + i, new Benchmarks.Tick(1, "work")));
				}
				publish(batch);
			}
		}
		AtomicLong handled = new AtomicLong();
		AtomicLong end = new AtomicLong();
		CountDownLatch done = new CountDownLatch(1);
		EventMessageHandler handler = (event) -> {
			if (handled.incrementAndGet() == STREAMED) {
				// A2's figure ends when the last cursor is committed: end Axon's when the last batch and its token are
				CurrentUnitOfWork.get().afterCommit((unitOfWork) -> {
					end.set(System.nanoTime());
					done.countDown();
				});
			}
			return null;
		};
		try (Processor processor = processor(name, handler, start, pooled)) {
			long began = System.nanoTime();
			processor.processor.start();
			if (!done.await(5, TimeUnit.MINUTES)) {
				throw new IllegalStateException(name + " handled " + handled.get() + " of " + STREAMED + " events in 5 minutes");
			}
			return STREAMED / ((end.get() - began) / 1e9);
		}
	}

	// --- latency

	/** Rounds alternating A2 (independent lane, as the drain table's row), the tracking and the pooled processor. */
	private void latency(Table table) throws Exception {
		List<double[]> a2 = new ArrayList<>();
		List<double[]> tracking = new ArrayList<>();
		List<double[]> pooled = new ArrayList<>();
		for (int round = 0; round < Benchmarks.ROUNDS; round++) {
			a2.add(this.a2Drain.latencyMillis());
			tracking.add(axonLatency(false));
			pooled.add(axonLatency(true));
		}
		String name = "append to handler start, 200 events/s over 100 sessions, A2 independent lane vs ";
		table.row(name + "TrackingEventProcessor", latencyCell(a2), latencyCell(tracking), latencyRatio(a2, tracking));
		table.row(name + "PooledStreamingEventProcessor", latencyCell(a2), latencyCell(pooled), latencyRatio(a2, pooled));
	}

	/** As {@link DrainBenchmarks#latencyMillis()}: 2,000 events at a steady 200/s, the first second left out. */
	private double[] axonLatency(boolean pooled) throws Exception {
		String name = "latency-" + this.names.incrementAndGet();
		int total = 2000;
		AtomicLongArray appendedAt = new AtomicLongArray(total);
		List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
		EventMessageHandler handler = (event) -> {
			int n = ((Benchmarks.Tick) event.getPayload()).n();
			if (n >= 200) {
				latencies.add(System.nanoTime() - appendedAt.get(n));
			}
			return null;
		};
		try (Processor processor = processor(name, handler, this.storage.createHeadToken(), pooled)) {
			processor.processor.start();
			processor.awaitClaimed(pooled ? POOLED_SEGMENTS : 1);
			long interval = TimeUnit.SECONDS.toNanos(1) / 200;
			long next = System.nanoTime();
			for (int i = 0; i < total; i++) {
				appendedAt.set(i, System.nanoTime());
				publish(List.of(new GenericDomainEventMessage<>("tick", name + "-" + (i % 100), i / 100, new Benchmarks.Tick(i, "x"))));
				next += interval;
				long wait = next - System.nanoTime();
				if (wait > 0) {
					TimeUnit.NANOSECONDS.sleep(wait);
				}
			}
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (latencies.size() < total - 200 && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
		}
		List<Long> sorted = new ArrayList<>(latencies);
		Collections.sort(sorted);
		return new double[] { DrainBenchmarks.percentile(sorted, 50) / 1e6, DrainBenchmarks.percentile(sorted, 99) / 1e6 };
	}

	private static String latencyCell(List<double[]> rounds) {
		double[] median = medians(rounds);
		return String.format(Locale.ROOT, "p50 %.1f ms, p99 %.1f ms", median[0], median[1]);
	}

	/** Axon's latency over A2's, so that above 1 is better for A2 as in the other rows. */
	private static String latencyRatio(List<double[]> a2, List<double[]> axon) {
		double[] mine = medians(a2);
		double[] theirs = medians(axon);
		return String.format(Locale.ROOT, "p50 %.2f, p99 %.2f (Axon/A2)", theirs[0] / mine[0], theirs[1] / mine[1]);
	}

	private static double[] medians(List<double[]> rounds) {
		return new double[] { Benchmarks.median(rounds.stream().map((r) -> r[0]).toList()),
				Benchmarks.median(rounds.stream().map((r) -> r[1]).toList()) };
	}

	// --- Axon's processors

	/** A processor with its executors, shut down together. */
	private record Processor(StreamingEventProcessor processor, List<ExecutorService> executors) implements AutoCloseable {

		void awaitClaimed(int segments) throws InterruptedException {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (this.processor.processingStatus().size() < segments && System.nanoTime() < deadline) {
				Thread.sleep(10);
			}
		}

		@Override
		public void close() {
			this.processor.shutDown();
			this.executors.forEach(ExecutorService::shutdownNow);
		}

	}

	private Processor processor(String name, EventMessageHandler handler, TrackingToken start, boolean pooled) {
		SimpleEventHandlerInvoker invoker = SimpleEventHandlerInvoker.builder().eventHandlers(handler).build();
		if (pooled) {
			ScheduledExecutorService coordinator = Executors.newScheduledThreadPool(1);
			ScheduledExecutorService workers = Executors.newScheduledThreadPool(POOLED_WORKERS);
			return new Processor(PooledStreamingEventProcessor.builder()
				.name(name)
				.eventHandlerInvoker(invoker)
				.messageSource(this.eventStore)
				.tokenStore(this.tokens)
				.transactionManager(this.transactions)
				.coordinatorExecutor(coordinator)
				.workerExecutor(workers)
				.initialSegmentCount(POOLED_SEGMENTS)
				.batchSize(PROCESSOR_BATCH)
				.initialToken((source) -> start)
				.build(), List.of(coordinator, workers));
		}
		return new Processor(TrackingEventProcessor.builder()
			.name(name)
			.eventHandlerInvoker(invoker)
			.messageSource(this.eventStore)
			.tokenStore(this.tokens)
			.transactionManager(this.transactions)
			.trackingEventProcessorConfiguration(TrackingEventProcessorConfiguration.forSingleThreadedProcessing()
				.andBatchSize(PROCESSOR_BATCH)
				.andInitialTrackingToken((source) -> start))
			.build(), List.of());
	}

	// --- what axon-spring would supply

	/** Axon's transactions as Spring transactions, as axon-spring's {@code SpringTransactionManager} does. */
	private static TransactionManager springTransactions(PlatformTransactionManager spring) {
		return () -> {
			TransactionStatus status = spring.getTransaction(TransactionDefinition.withDefaults());
			return new Transaction() {

				@Override
				public void commit() {
					if (status.isNewTransaction() && !status.isCompleted()) {
						spring.commit(status);
					}
				}

				@Override
				public void rollback() {
					if (status.isNewTransaction() && !status.isCompleted()) {
						spring.rollback(status);
					}
				}

			};
		};
	}

	/** The connection of the Spring transaction running, as axon-spring's {@code SpringDataSourceConnectionProvider} gives it. */
	private static ConnectionProvider springConnections(DataSource dataSource) {
		return () -> ConnectionWrapperFactory.wrap(DataSourceUtils.doGetConnection(dataSource),
				new ConnectionWrapperFactory.ConnectionCloseHandler() {

					@Override
					public void close(Connection connection) {
						DataSourceUtils.releaseConnection(connection, dataSource);
					}

					@Override
					public void commit(Connection connection) throws SQLException {
						if (!DataSourceUtils.isConnectionTransactional(connection, dataSource)) {
							connection.commit();
						}
					}

				});
	}

	@Override
	public void close() {
		this.eventStore.shutDown();
	}

}
