package dev.a2.store;

import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * A unit of consumer work that an appended event creates, in the append's transaction.
 *
 * @param consumer the consumer's name
 * @param laneKey for a unit of an independent or keyed consumer, its lane key ({@code null} for
 * independent); ignored for a cursor
 * @param cursor whether the consumer has a fixed lane: the event moves the session's cursor target
 * rather than adding a unit
 * @param backfill for a cursor created by this append, start at the first event rather than at this
 * append
 * @param types for a cursor, the types the consumer takes ({@code null} for all)
 */
public record WorkUnit(String consumer, @Nullable String laneKey, boolean cursor, boolean backfill,
		@Nullable Set<String> types) {

	public static WorkUnit head(String consumer, @Nullable String laneKey) {
		return new WorkUnit(consumer, laneKey, false, false, null);
	}

	public static WorkUnit cursor(String consumer, boolean backfill, @Nullable Set<String> types) {
		return new WorkUnit(consumer, null, true, backfill, types);
	}

}
