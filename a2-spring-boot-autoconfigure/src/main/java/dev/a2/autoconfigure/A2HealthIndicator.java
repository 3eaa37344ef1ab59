package dev.a2.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.ErrorCode;
import dev.a2.store.StoreFailures;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * A2's health: the store answers, and the sweep (when this instance runs consumers) succeeded
 * recently.
 */
public class A2HealthIndicator extends AbstractHealthIndicator {

	private final A2Server server;

	private final @Nullable A2DrainLifecycle drain;

	private final Duration sweepInterval;

	private final Clock clock;

	public A2HealthIndicator(A2Server server, @Nullable A2DrainLifecycle drain, Duration sweepInterval) {
		this(server, drain, sweepInterval, Clock.systemUTC());
	}

	/** @param clock the time the sweeps are judged by: real time, as the sweep's timer runs on */
	A2HealthIndicator(A2Server server, @Nullable A2DrainLifecycle drain, Duration sweepInterval, Clock clock) {
		super("A2 health check failed");
		this.server = server;
		this.drain = drain;
		this.sweepInterval = sweepInterval;
		this.clock = clock;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		try {
			this.server.checkStore();
			builder.up().withDetail("store", "reachable");
		}
		catch (A2Exception ex) {
			if (ex.code() != ErrorCode.STORE_UNAVAILABLE) {
				throw ex;
			}
			// down, with the reason, but not thrown: Boot logs a thrown failure at WARN with its stack trace
			// at every probe, where the outage is said once (by the sweep, the listener, the liveness)
			// what the driver or the pool said, without the advice a failed write gets
			builder.down().withDetail("store", "unreachable: PostgreSQL cannot be reached (" + StoreFailures.rootMessage(ex) + ")");
		}
		if (this.drain != null && this.drain.isRunning()) {
			Instant last = this.drain.lastSweep();
			builder.withDetail("lastSweep", (last != null) ? last.toString() : "none yet");
			// a sweep that has not succeeded for many intervals means due work is not being found; before
			// the first success that counts from the sweeping's start (with manual scheduling, never)
			Instant since = (last != null) ? last : this.drain.sweepingSince();
			if (since != null && since.isBefore(this.clock.instant().minus(this.sweepInterval.multipliedBy(30)))) {
				builder.down()
					.withDetail("sweep", (last != null) ? "no successful sweep since " + last
							: "no successful sweep since sweeping started at " + since);
			}
		}
	}

}
