package dev.a2.store;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Sessions and their append-only logs. Implementations throw {@link dev.a2.A2Exception} with
 * {@code STORE_UNAVAILABLE} when the database cannot be reached, and {@code CONFLICT} when a
 * clear's condition fails; a failed call changes nothing.
 */
public interface EventStore {

	/** The type of the marker event a clear appends. Contracts may not declare types under {@code a2.}. */
	String CLEAR_MARKER = "a2.cleared";

	/**
	 * Appends a batch in one transaction: all of it lands or none of it. Indexes are contiguous and
	 * assigned under the session's row lock, so index N+1 is never visible before N. An event whose id
	 * already exists in the session is not appended again: its stored row answers in its place.
	 * @return one stored event per input event, in input order
	 */
	default List<StoredEvent> append(String contract, String session, List<EventToStore> events) {
		return append(contract, session, events, null);
	}

	/**
	 * Appends as {@link #append(String, String, List)} does, but only while the session's clear index
	 * is still {@code clearIndex} ({@code null}: whatever it is). A consumer's run appends with its
	 * trigger's clear index: a clear ends the runs of the events before it, and what such a run goes
	 * on to append must not land in the session's new start. The check is made under the session's
	 * row lock, so a clear that commits while the append waits for the lock fails it.
	 * @throws dev.a2.A2Exception {@code ABORTED} when the session was cleared since; nothing is stored
	 */
	List<StoredEvent> append(String contract, String session, List<EventToStore> events, @Nullable Integer clearIndex);

	/**
	 * Whether {@link #append} stores a unit's {@link WorkUnit#lease() lease} with it. A store that
	 * does not is given none: its units are claimed after the append, as they always could be.
	 */
	default boolean storesLeases() {
		return false;
	}

	/** Events after {@code after} and after the latest clear, clear markers excluded, with the head. */
	StoredPage history(String contract, String session, long after, int limit);

	/** Raw events with {@code after < index <= through}, in index order, at most {@code limit}. */
	List<StoredEvent> range(String contract, String session, long after, long through, int limit);

	/** Where the session stands; {@link SessionHead#EMPTY} for a session never written. */
	SessionHead head(String contract, String session);

	/** The index of the latest clear marker at or before {@code index}, or 0. */
	long clearedAtOrBefore(String contract, String session, long index);

	/**
	 * Starts the session over: appends a clear marker and increments its clear index.
	 * @param ifLastIndex when not {@code null}, clear only if the session's last index is still this
	 * value, else fail with {@code CONFLICT}
	 * @return the clear marker
	 */
	default StoredEvent clear(String contract, String session, @Nullable Long ifLastIndex) {
		return clear(contract, session, ifLastIndex, null);
	}

	/**
	 * Clears as {@link #clear(String, String, Long)} does, but only while the session's clear index is
	 * still {@code clearIndex} ({@code null}: whatever it is): a consumer's run clears with its
	 * trigger's, so a run that a clear ended does not clear the session's new start again.
	 * @throws dev.a2.A2Exception {@code ABORTED} when the session was cleared since; nothing is changed
	 */
	StoredEvent clear(String contract, String session, @Nullable Long ifLastIndex, @Nullable Integer clearIndex);

}
