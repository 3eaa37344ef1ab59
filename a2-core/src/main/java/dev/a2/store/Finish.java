package dev.a2.store;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * How an attempt ended, to be written if the attempt still holds its claim.
 *
 * @param events for a completed attempt, the events it returned
 * @param error for a failed attempt, its error text; {@code null} when it completed
 * @param retryAt for a failed attempt, when it may run again
 * @param dead for a failed attempt, whether it is dead-lettered now
 */
public record Finish(Claim claim, List<EventToStore> events, @Nullable String error, @Nullable Instant retryAt,
		boolean dead) {

	public static Finish completed(Claim claim, List<EventToStore> events) {
		return new Finish(claim, events, null, null, false);
	}

	public static Finish failed(Claim claim, String error, Instant retryAt, boolean dead) {
		return new Finish(claim, List.of(), error, retryAt, dead);
	}

	public boolean isCompleted() {
		return this.error == null;
	}

}
