package dev.a2.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

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
 * answers them all, at most every few seconds however often they are scraped. Besides the consumers
 * the application registers, they count those whose work the store held when the gauges were bound
 * (a consumer since removed still has its dead letters counted).
 */
public class A2Metrics implements MeterBinder {

	private static final Log logger = LogFactory.getLog(A2Metrics.class);

	private static final Duration REFRESH = Duration.ofSeconds(5);

	private final A2Server server;

	private Map<String, PendingWork> pending = Map.of();

	private Instant readAt = Instant.MIN;

	public A2Metrics(A2Server server) {
		this.server = server;
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
		for (PendingWork work : current().values()) {
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

	private synchronized Map<String, PendingWork> current() {
		Instant now = Instant.now();
		if (this.readAt.plus(REFRESH).isBefore(now)) {
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
		return this.pending;
	}

}
