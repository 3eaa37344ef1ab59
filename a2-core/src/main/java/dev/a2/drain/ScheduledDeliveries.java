package dev.a2.drain;

import java.time.Instant;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

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

	private ScheduledDeliveries() {
	}

	/**
	 * Delivers every task due at {@code now}, one per transaction so each is delivered exactly once
	 * across instances, until none is left or {@code stopping} says so. A failure is logged, not
	 * thrown: the task stays stored and the next sweep tries again.
	 */
	public static void deliverDue(WorkStore work, Instant now, Consumer<ScheduledTask> delivery, BooleanSupplier stopping) {
		try {
			while (!stopping.getAsBoolean() && work.deliverDue(now, delivery)) {
				// the next one
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not deliver a scheduled task; the next sweep tries again", ex);
		}
	}

}
