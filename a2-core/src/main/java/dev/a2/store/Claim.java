package dev.a2.store;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A unit of consumer work claimed by one instance: the event to run, and the token that fences the
 * attempt (only the holder of the current token can finish it).
 *
 * @param cursor whether it is the head of a fixed-lane cursor
 * @param event the triggering event, or {@code null} for a cursor that has no matching event left
 * (finishing it moves the cursor to its target)
 * @param position for a cursor, the index it had processed through when claimed
 * @param target for a cursor, the index of the last matching event it knew of
 */
public record Claim(String contract, String session, String consumer, boolean cursor, @Nullable String laneKey,
		@Nullable StoredEvent event, long position, long target, int attempt, int failures, UUID token) {

	/** The index of the triggering event (the cursor's target when it has none). */
	public long index() {
		return (this.event != null) ? this.event.index() : this.target;
	}

}
