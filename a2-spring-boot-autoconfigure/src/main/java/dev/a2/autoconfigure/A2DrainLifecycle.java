package dev.a2.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;

import dev.a2.A2Server;
import dev.a2.store.OutageLog;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Runs the sweep on A2's own scheduler while the application runs (the application's
 * {@code @Scheduled} beans are left alone), and stops the consumers gracefully when it stops. With
 * manual scheduling ({@code a2.drain.scheduling=manual}) it sweeps nothing itself.
 */
public class A2DrainLifecycle implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(A2DrainLifecycle.class);

	private final A2Server server;

	private final @Nullable Duration interval;

	private @Nullable ThreadPoolTaskScheduler scheduler;

	private @Nullable ScheduledFuture<?> sweeps;

	private volatile @Nullable Instant lastSweep;

	private volatile @Nullable Instant sweepingSince;

	private volatile boolean running;

	private final OutageLog outage = new OutageLog(logger, "A2's sweep");

	/** @param interval how often to sweep; {@code null} for never (manual scheduling) */
	public A2DrainLifecycle(A2Server server, @Nullable Duration interval) {
		this.server = server;
		this.interval = interval;
	}

	@Override
	public synchronized void start() {
		this.running = true;
		if (this.interval == null) {
			return;
		}
		this.sweepingSince = Instant.now();
		ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
		scheduler.setThreadNamePrefix("a2-sweep-");
		scheduler.setDaemon(true);
		scheduler.initialize();
		this.scheduler = scheduler;
		this.sweeps = scheduler.scheduleWithFixedDelay(this::sweep, this.interval);
	}

	private void sweep() {
		try {
			this.server.sweep();
			this.lastSweep = Instant.now();
			this.outage.succeeded();
		}
		catch (RuntimeException ex) {
			if (!this.outage.failed(ex)) {
				logger.warn("A2's sweep failed; it runs again in " + this.interval.toMillis() + " ms", ex);
			}
		}
	}

	@Override
	public synchronized void stop() {
		if (this.sweeps != null) {
			this.sweeps.cancel(false);
		}
		if (this.scheduler != null) {
			this.scheduler.shutdown();
		}
		this.server.close();
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/** When the last sweep succeeded, or {@code null} before the first. */
	public @Nullable Instant lastSweep() {
		return this.lastSweep;
	}

	/**
	 * When this instance began sweeping on its own timer, or {@code null} with manual scheduling (the
	 * application sweeps) and before the start: until a sweep succeeds, how long it has gone without one
	 * counts from here.
	 */
	public @Nullable Instant sweepingSince() {
		return this.sweepingSince;
	}

}
