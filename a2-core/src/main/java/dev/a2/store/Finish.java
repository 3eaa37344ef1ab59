package dev.a2.store;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * How an attempt ended, to be written if the attempt still holds its claim.
 *
 * @param events the events the runs that completed returned, appended with the finish
 * @param through the index processed through: a unit's own index once it completed; for a cursor,
 * its new position
 * @param error for a failed attempt, its error text; {@code null} when it completed
 * @param failedIndex for a failed attempt, the index of the event that failed
 * @param retryAt for a failed attempt, when it may run again
 * @param dead for a failed attempt, whether it is dead-lettered now
 */
public record Finish(Claim claim, List<EventToStore> events, long through, @Nullable String error, long failedIndex,
		@Nullable Instant retryAt, boolean dead) {

	public static Finish completed(Claim claim, List<EventToStore> events, long through) {
		return new Finish(claim, events, through, null, 0, null, false);
	}

	public static Finish failed(Claim claim, List<EventToStore> events, long through, String error, long failedIndex,
			Instant retryAt, boolean dead) {
		return new Finish(claim, events, through, error, failedIndex, retryAt, dead);
	}

	public boolean isCompleted() {
		return this.error == null;
	}

}
