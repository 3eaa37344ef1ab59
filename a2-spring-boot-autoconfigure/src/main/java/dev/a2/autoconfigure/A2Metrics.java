package dev.a2.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.store.WorkStore.PendingWork;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Gauges per consumer: {@code a2.consumer.pending} (units not done), {@code a2.consumer.lag} (how far
 * behind the log), {@code a2.consumer.dead.letters} and {@code a2.consumer.oldest.pending.age}
 * (seconds the oldest pending event has waited). One query
 * answers them all, at most every few seconds however often they are scraped, on a thread of its own:
 * a scrape answers the values last read and never waits for the database. While PostgreSQL cannot be
 * reached they keep the last values read. Besides the consumers the application registers, they count
 * those whose work the store held when the gauges were bound (a consumer since removed still has its
 * dead letters counted).
 */
public class A2Metrics implements MeterBinder, AutoCloseable {

	private static final Log logger = LogFactory.getLog(A2Metrics.class);

	private static final Duration REFRESH = Duration.ofSeconds(5);

	private final A2Server server;

	/** How old the values may get before a scrape has them read again. */
	private final Duration refresh;

	/**
	 * Reads the pending work off the scraping thread: read there, a scrape in an outage waited for a
	 * pool connection (30 s by default), longer than Prometheus waits, and the whole target, the JVM's
	 * metrics too, went missing for as long as the outage lasted.
	 */
	private final ThreadPoolExecutor reader;

	private final AtomicBoolean reading = new AtomicBoolean();

	private volatile Map<String, PendingWork> pending = Map.of();

	private volatile Instant readAt = Instant.MIN;

	public A2Metrics(A2Server server) {
		this(server, REFRESH);
	}

	A2Metrics(A2Server server, Duration refresh) {
		this.server = server;
		this.refresh = refresh;
		this.reader = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), (task) -> {
			Thread thread = new Thread(task, "a2-metrics");
			thread.setDaemon(true);
			return thread;
		});
		this.reader.allowCoreThreadTimeOut(true);
	}

	/** Stops the thread that reads the pending work. */
	@Override
	public void close() {
		this.reader.shutdownNow();
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Set<String> bound = new HashSet<>();
		for (Consumer consumer : this.server.consumers()) {
			bind(registry, consumer.contract(), consumer.name());
			bound.add(consumer.contract() + "/" + consumer.name());
		}
		// consumers the store has work of, which this application does not register (removed, renamed,
		// or left to other instances): their dead letters would otherwise be counted nowhere
		read();
		for (PendingWork work : this.pending.values()) {
			if (bound.add(work.contract() + "/" + work.consumer())) {
				bind(registry, work.contract(), work.consumer());
			}
		}
	}

	private void bind(MeterRegistry registry, String contract, String consumer) {
		String key = contract + "/" + consumer;
		Gauge.builder("a2.consumer.pending", this, (metrics) -> metrics.work(key).pending())
			.description("Units of work of the consumer not done yet")
			.tags("contract", contract, "consumer", consumer)
			.register(registry);
		Gauge.builder("a2.consumer.lag", this, (metrics) -> metrics.work(key).lag())
			.description("How far behind the log the consumer is: units not done, or a cursor's distance in indexes")
			.tags("contract", contract, "consumer", consumer)
			.register(registry);
		Gauge.builder("a2.consumer.dead.letters", this, (metrics) -> metrics.work(key).dead())
			.description("Dead-lettered units of the consumer, waiting for a redrive")
			.tags("contract", contract, "consumer", consumer)
			.register(registry);
		Gauge.builder("a2.consumer.oldest.pending.age", this, (metrics) -> metrics.oldestAgeSeconds(key))
			.description("How long the consumer's oldest pending event has waited")
			.baseUnit("seconds")
			.tags("contract", contract, "consumer", consumer)
			.register(registry);
	}

	private PendingWork work(String key) {
		PendingWork work = current().get(key);
		return (work != null) ? work : new PendingWork("", "", 0, 0, 0, null);
	}

	private double oldestAgeSeconds(String key) {
		Instant oldest = work(key).oldestDueAt();
		return (oldest != null) ? Duration.between(oldest, this.server.clock().instant()).toMillis() / 1000.0 : 0;
	}

	/**
	 * The values last read; once they are older than the refresh (on the wall clock: a test's virtual
	 * clock may stand still), they are read again meanwhile.
	 */
	private Map<String, PendingWork> current() {
		if (!this.readAt.plus(this.refresh).isAfter(Instant.now()) && this.reading.compareAndSet(false, true)) {
			try {
				this.reader.execute(() -> {
					try {
						read();
					}
					finally {
						this.reading.set(false);
					}
				});
			}
			catch (RejectedExecutionException ex) {
				// closed: the application is stopping
				this.reading.set(false);
			}
		}
		return this.pending;
	}

	private void read() {
		Instant now = Instant.now();
		try {
			Map<String, PendingWork> read = new HashMap<>();
			for (PendingWork work : this.server.pendingWork()) {
				read.put(work.contract() + "/" + work.consumer(), work);
			}
			this.pending = read;
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read A2's pending work for its gauges; keeping the last values", ex);
		}
		this.readAt = now;
	}

}
