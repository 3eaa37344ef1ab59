package dev.a2.store;

import java.util.List;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A unit of consumer work claimed by one instance: the events to run, and the token that fences the
 * attempt (only the holder of the current token can finish it).
 *
 * @param cursor whether it is the head of a fixed-lane cursor
 * @param events the triggering event of a unit; for a cursor, the next matching events in order (a
 * cursor claims several at once), none when it has no matching event left (finishing it then moves
 * it to its target)
 * @param position for a cursor, the index it had processed through when claimed
 * @param target for a cursor, the index of the last event it knew of
 */
public record Claim(String contract, String session, String consumer, boolean cursor, @Nullable String laneKey,
		List<StoredEvent> events, long position, long target, int attempt, int failures, UUID token) {

	/** The first event to run, or {@code null} for a cursor with nothing left to run. */
	public @Nullable StoredEvent event() {
		return this.events.isEmpty() ? null : this.events.get(0);
	}

	/** The index of the first event to run (the cursor's target when it has none). */
	public long index() {
		return this.events.isEmpty() ? this.target : this.events.get(0).index();
	}

}
