package dev.a2.autoconfigure;

import java.time.Duration;

import dev.a2.DrainSettings;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of A2, under {@code a2.*}.
 */
@ConfigurationProperties("a2")
public class A2Properties {

	private final Store store = new Store();

	private final State state = new State();

	private final Drain drain = new Drain();

	public Store getStore() {
		return this.store;
	}

	public State getState() {
		return this.state;
	}

	public Drain getDrain() {
		return this.drain;
	}

	/** When A2 applies its schema migrations. */
	public enum SchemaInitialization {

		/** At every start-up, applying only what the database lacks. */
		ALWAYS,

		/** Never: the schema is managed outside the application. */
		NEVER

	}

	public static class Store {

		/**
		 * Whether A2 applies its schema migrations (recorded in their own table,
		 * a2_schema_history) at start-up. A migration that fails stops the start-up.
		 */
		private SchemaInitialization initializeSchema = SchemaInitialization.ALWAYS;

		public SchemaInitialization getInitializeSchema() {
			return this.initializeSchema;
		}

		public void setInitializeSchema(SchemaInitialization initializeSchema) {
			this.initializeSchema = initializeSchema;
		}

	}

	public static class State {

		/**
		 * Snapshot each reducer's state every this many events, so a read folds at most that many.
		 */
		private int snapshotEvery = 100;

		/**
		 * How many (session, reducer) states each instance keeps in memory.
		 */
		private int cacheSize = 10_000;

		public int getSnapshotEvery() {
			return this.snapshotEvery;
		}

		public void setSnapshotEvery(int snapshotEvery) {
			this.snapshotEvery = snapshotEvery;
		}

		public int getCacheSize() {
			return this.cacheSize;
		}

		public void setCacheSize(int cacheSize) {
			this.cacheSize = cacheSize;
		}

	}

	public static class Drain {

		/**
		 * Whether this instance runs the consumers. An instance that does not still creates their
		 * work when it appends, for the instances that do.
		 */
		private boolean enabled = true;

		/**
		 * How long a claim holds before another instance may take the unit over; running attempts
		 * renew it every third of it.
		 */
		private Duration lease = Duration.ofSeconds(30);

		/**
		 * The most consumer runs at once on this instance.
		 */
		private int concurrency = 64;

		/**
		 * The most units claimed in one round trip.
		 */
		private int claimBatch = 32;

		/**
		 * The back-off after a unit's first failure; it doubles with each failure.
		 */
		private Duration retryBase = Duration.ofSeconds(1);

		/**
		 * The longest back-off between failures.
		 */
		private Duration retryMax = Duration.ofMinutes(5);

		/**
		 * Failures (and attempts that never finished) after which a unit is dead-lettered.
		 */
		private int maxFailures = 10;

		/**
		 * How often the sweep looks across the database for due work: lapsed leases, passed
		 * back-offs, unclaimed units, backfills and scheduled tasks.
		 */
		private Duration sweepInterval = Duration.ofSeconds(1);

		/**
		 * The most sessions with due work one sweep starts draining.
		 */
		private int sweepBatch = 1000;

		/**
		 * On shutdown, how long running attempts may finish before they are aborted and their
		 * claims released for another instance.
		 */
		private Duration stopGrace = Duration.ofSeconds(10);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getLease() {
			return this.lease;
		}

		public void setLease(Duration lease) {
			this.lease = lease;
		}

		public int getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(int concurrency) {
			this.concurrency = concurrency;
		}

		public int getClaimBatch() {
			return this.claimBatch;
		}

		public void setClaimBatch(int claimBatch) {
			this.claimBatch = claimBatch;
		}

		public Duration getRetryBase() {
			return this.retryBase;
		}

		public void setRetryBase(Duration retryBase) {
			this.retryBase = retryBase;
		}

		public Duration getRetryMax() {
			return this.retryMax;
		}

		public void setRetryMax(Duration retryMax) {
			this.retryMax = retryMax;
		}

		public int getMaxFailures() {
			return this.maxFailures;
		}

		public void setMaxFailures(int maxFailures) {
			this.maxFailures = maxFailures;
		}

		public Duration getSweepInterval() {
			return this.sweepInterval;
		}

		public void setSweepInterval(Duration sweepInterval) {
			this.sweepInterval = sweepInterval;
		}

		public int getSweepBatch() {
			return this.sweepBatch;
		}

		public void setSweepBatch(int sweepBatch) {
			this.sweepBatch = sweepBatch;
		}

		public Duration getStopGrace() {
			return this.stopGrace;
		}

		public void setStopGrace(Duration stopGrace) {
			this.stopGrace = stopGrace;
		}

		/** The drainer's settings. */
		public DrainSettings toSettings() {
			return new DrainSettings(this.lease, this.lease.dividedBy(3), this.concurrency, this.claimBatch, this.retryBase,
					this.retryMax, this.maxFailures, this.sweepBatch);
		}

	}

}
