package dev.a2.store;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Presence of sessions: per (participant, field) the value of the latest write, decided by the
 * writer's timestamp. Implementations throw {@link dev.a2.A2Exception} with {@code STORE_UNAVAILABLE}
 * when the database cannot be reached.
 */
public interface PresenceStore {

	/** The live fields of a session: not removed, not expired at {@code now}; by participant, then field. */
	List<PresenceRow> read(String contract, String session, Instant now);

	/**
	 * Writes a participant's fields where {@code at} is not older than what is stored (an expired
	 * value counts as absent, a tombstone does not until it is deleted), and refreshes the expiry of
	 * all the participant's fields.
	 * @param values field → JSON text, or {@code null} to remove the field (a tombstone)
	 * @return the fields that were written
	 */
	List<PresenceRow> write(String contract, String session, String participant, Map<String, @Nullable String> values,
			Instant at, Instant expiresAt, Instant now);

	/** Deletes rows that expired before {@code before}, in every session; answers how many. */
	int deleteExpired(Instant before);

	/**
	 * One field of one participant.
	 * @param value the value as JSON text, {@code null} for a tombstone
	 */
	record PresenceRow(String participant, String field, @Nullable String value, Instant at) {
	}

}
