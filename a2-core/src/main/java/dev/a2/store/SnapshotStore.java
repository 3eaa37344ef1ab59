package dev.a2.store;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Snapshots of reducer state, so that reading state folds only the events after the nearest one.
 */
public interface SnapshotStore {

	/** The snapshot with the highest index in {@code (after, through]}, or {@code null}. */
	@Nullable Snapshot latest(String contract, String session, String reducer, long after, long through);

	/** Saves snapshots; one that exists already at the same index is left as it is. */
	void save(String contract, String session, String reducer, List<Snapshot> snapshots);

	/** Drops a session's snapshots at or before {@code index} (they predate its latest clear). */
	void deleteThrough(String contract, String session, long index);

	/** A reducer's state, as JSON, after folding the events through {@code index}. */
	record Snapshot(long index, String state) {
	}

}
