package dev.a2.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import dev.a2.store.StoreFailures;
import dev.a2.store.WorkStore;
import dev.a2.store.WorkStore.ScheduledTask;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The sweep's delivery of scheduled tasks that are due. Apart from the {@link Drainer} because a
 * server without consumers has no drainer and still delivers what the application scheduled.
 */
public final class ScheduledDeliveries {

	private static final Log logger = LogFactory.getLog(ScheduledDeliveries.class);

	/** How long a task whose delivery failed waits before it is tried again. */
	static final Duration RETRY_FAILED = Duration.ofMinutes(1);

	private ScheduledDeliveries() {
	}

	/**
	 * Delivers every task of {@code contracts} due at {@code now}, one per transaction so each is
	 * delivered exactly once across instances, until none is left or {@code stopping} says so. A
	 * failure is logged, not thrown, and the task stays stored: one whose delivery failed (its events
	 * no longer bind to the contract as deployed now, say) is tried again {@link #RETRY_FAILED} later,
	 * and the tasks after it are delivered meanwhile. When PostgreSQL cannot be reached, that is thrown,
	 * for the sweep to report; the next sweep tries again.
	 */
	public static void deliverDue(WorkStore work, Instant now, Collection<String> contracts,
			Consumer<ScheduledTask> delivery, BooleanSupplier stopping) {
		while (!stopping.getAsBoolean()) {
			AtomicReference<ScheduledTask> delivering = new AtomicReference<>();
			try {
				if (!work.deliverDue(now, contracts, (task) -> {
					delivering.set(task);
					delivery.accept(task);
				})) {
					return;
				}
			}
			catch (RuntimeException ex) {
				if (StoreFailures.isUnavailable(ex)) {
					// the sweep says so, once for the whole outage
					throw ex;
				}
				ScheduledTask failed = delivering.get();
				if (failed == null) {
					logger.warn("Could not deliver a scheduled task; the next sweep tries again", ex);
					return;
				}
				// the oldest due task is read first: one that fails at every try must not hold up those after it
				Instant retryAt = now.plus(RETRY_FAILED);
				logger.warn("Could not deliver scheduled task '" + failed.id() + "' of session '" + failed.session()
						+ "' of contract '" + failed.contract() + "'; it is tried again at " + retryAt, ex);
				try {
					work.postpone(failed, retryAt);
				}
				catch (RuntimeException postponing) {
					logger.warn("Could not put off scheduled task '" + failed.id() + "'; the next sweep tries again", postponing);
					return;
				}
			}
		}
	}

}
