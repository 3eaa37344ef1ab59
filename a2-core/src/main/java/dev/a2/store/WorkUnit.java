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
 * @param lease for a unit, the lease the appending instance takes on it in the append (stored as
 * its first attempt's claim), or {@code null} to store it unclaimed; never for a cursor
 */
public record WorkUnit(String consumer, @Nullable String laneKey, boolean cursor, boolean backfill,
		@Nullable Set<String> types, @Nullable WorkLease lease) {

	public static WorkUnit head(String consumer, @Nullable String laneKey) {
		return new WorkUnit(consumer, laneKey, false, false, null, null);
	}

	public static WorkUnit cursor(String consumer, boolean backfill, @Nullable Set<String> types) {
		return new WorkUnit(consumer, null, true, backfill, types, null);
	}

	/** This unit, stored already leased to the appending instance. */
	public WorkUnit leased(WorkLease lease) {
		if (this.cursor) {
			throw new IllegalStateException("a cursor is not leased by an append");
		}
		return new WorkUnit(this.consumer, this.laneKey, false, false, null, lease);
	}

}
