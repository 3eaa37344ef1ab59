package dev.a2.store;

import org.apache.commons.logging.Log;

/**
 * What a task that runs again and again (a sweep, a heartbeat) logs while PostgreSQL cannot be
 * reached: the first failure at WARN on one line, the ones after at DEBUG with their stack traces,
 * and at INFO the first success after them, saying how long it failed. An outage of a minute is then
 * two lines in the log, not a stack trace per try. Failures of any other kind are left to the caller.
 */
public final class OutageLog {

	private final Log logger;

	private final String task;

	/** Read without the lock on every success: a task that never fails pays a volatile read. */
	private volatile boolean failing;

	private long failingSince;

	private int failures;

	/**
	 * @param task what the task does, to start a sentence ("A2's sweep")
	 */
	public OutageLog(Log logger, String task) {
		this.logger = logger;
		this.task = task;
	}

	/** Logs the failure when it is PostgreSQL that cannot be reached; answers whether it was. */
	public boolean failed(Throwable ex) {
		if (!StoreFailures.isUnavailable(ex)) {
			return false;
		}
		synchronized (this) {
			this.failures++;
			if (!this.failing) {
				this.failing = true;
				this.failingSince = System.nanoTime();
				this.logger.warn(this.task + " cannot reach PostgreSQL (" + StoreFailures.rootMessage(ex)
						+ "); it goes on trying, and says here when it succeeds");
				return true;
			}
		}
		if (this.logger.isDebugEnabled()) {
			this.logger.debug(this.task + " still cannot reach PostgreSQL", ex);
		}
		return true;
	}

	/** Says the task succeeded: logged when PostgreSQL could not be reached before. */
	public void succeeded() {
		if (!this.failing) {
			return;
		}
		synchronized (this) {
			if (!this.failing) {
				return;
			}
			long millis = (System.nanoTime() - this.failingSince) / 1_000_000;
			this.logger.info(this.task + " reaches PostgreSQL again, after " + this.failures + " failed tr"
					+ ((this.failures == 1) ? "y" : "ies") + " in " + millis + " ms");
			this.failing = false;
			this.failures = 0;
		}
	}

}
