package dev.a2;

import java.time.Duration;

/**
 * How the drainer runs consumers.
 *
 * @param lease how long a claim holds before another instance may take the unit over (at once when
 * the store sees the claiming instance gone: {@link dev.a2.store.WorkStore#lapseOrphaned()})
 * @param heartbeat how often running attempts renew their leases (a third of the lease by default)
 * @param concurrency the most consumer runs at once on this instance
 * @param claimBatch the most units claimed in one round trip
 * @param retryBase the back-off after the first failure; it doubles with each failure
 * @param retryMax the longest back-off
 * @param maxFailures failures (and attempts) after which a unit is dead-lettered
 * @param sweepBatch the most sessions with due work one sweep starts draining, and the most sessions
 *     one sweep looks at for each backfilling consumer
 * @param cursorBatch the most events one claim of a fixed-lane cursor runs and completes together
 */
public record DrainSettings(Duration lease, Duration heartbeat, int concurrency, int claimBatch, Duration retryBase,
		Duration retryMax, int maxFailures, int sweepBatch, int cursorBatch) {

	/** The documented defaults: 30 s leases renewed every 10 s, 64 runs at once, back-off from 1 s to 5 min, 10 failures. */
	public static final DrainSettings DEFAULTS = new DrainSettings(Duration.ofSeconds(30), Duration.ofSeconds(10), 64, 32,
			Duration.ofSeconds(1), Duration.ofMinutes(5), 10, 1000, 256);

	/**
	 * Checks that the lease is positive, the heartbeat shorter than it, every count at least 1, and the
	 * back-off's longest no shorter than its first.
	 */
	public DrainSettings {
		if (lease.isNegative() || lease.isZero() || heartbeat.isNegative() || heartbeat.isZero()
				|| heartbeat.compareTo(lease) >= 0) {
			throw new IllegalArgumentException("lease must be positive and heartbeat shorter than it, were " + lease + " and " + heartbeat);
		}
		if (concurrency < 1 || claimBatch < 1 || maxFailures < 1 || sweepBatch < 1 || cursorBatch < 1) {
			throw new IllegalArgumentException("concurrency, claimBatch, maxFailures, sweepBatch and cursorBatch must be at least 1");
		}
		if (retryBase.isNegative() || retryMax.compareTo(retryBase) < 0) {
			// a longest back-off under the first would make every back-off the longest, doubling nothing
			throw new IllegalArgumentException("retryBase must be 0 or longer and retryMax no shorter than it, were "
					+ retryBase + " and " + retryMax);
		}
	}

	/** The back-off after the {@code failures}th failure: {@code min(base × 2^(failures−1), max)}. */
	public Duration retryDelay(int failures) {
		double delay = this.retryBase.toMillis() * Math.pow(2, Math.max(failures - 1, 0));
		return Duration.ofMillis((long) Math.min(delay, this.retryMax.toMillis()));
	}

	/** These settings with another lease, renewed every third of it. */
	public DrainSettings withLease(Duration lease) {
		return new DrainSettings(lease, lease.dividedBy(3), this.concurrency, this.claimBatch, this.retryBase, this.retryMax,
				this.maxFailures, this.sweepBatch, this.cursorBatch);
	}

	/** These settings with another back-off. */
	public DrainSettings withRetry(Duration base, Duration max) {
		return new DrainSettings(this.lease, this.heartbeat, this.concurrency, this.claimBatch, base, max, this.maxFailures,
				this.sweepBatch, this.cursorBatch);
	}

	/** These settings with another number of runs at once. */
	public DrainSettings withConcurrency(int concurrency) {
		return new DrainSettings(this.lease, this.heartbeat, concurrency, this.claimBatch, this.retryBase, this.retryMax,
				this.maxFailures, this.sweepBatch, this.cursorBatch);
	}

	/** These settings with another number of events per cursor claim. */
	public DrainSettings withCursorBatch(int cursorBatch) {
		return new DrainSettings(this.lease, this.heartbeat, this.concurrency, this.claimBatch, this.retryBase, this.retryMax,
				this.maxFailures, this.sweepBatch, cursorBatch);
	}

	/**
	 * These settings with another sweep batch: the most sessions with due work one sweep starts
	 * draining, and the most sessions one sweep looks at for each backfilling consumer.
	 */
	public DrainSettings withSweepBatch(int sweepBatch) {
		return new DrainSettings(this.lease, this.heartbeat, this.concurrency, this.claimBatch, this.retryBase, this.retryMax,
				this.maxFailures, sweepBatch, this.cursorBatch);
	}

	/** These settings with another number of failures before a dead letter. */
	public DrainSettings withMaxFailures(int maxFailures) {
		return new DrainSettings(this.lease, this.heartbeat, this.concurrency, this.claimBatch, this.retryBase, this.retryMax,
				maxFailures, this.sweepBatch, this.cursorBatch);
	}

}
