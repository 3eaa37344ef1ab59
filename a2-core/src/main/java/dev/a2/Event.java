package dev.a2;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * An event as stored in a session's log.
 *
 * @param index position in the session, 1, 2, 3 … without gaps
 * @param id unique within the session
 * @param type the event type of the contract
 * @param payload the payload bound to the Java type the contract declares for {@code type}
 * @param createdAt when it was appended, by the database's clock (one instant for a whole batch)
 * @param clearIndex how many clears of the session preceded it
 * @param cause the consumer run that wrote it, or {@code null} for a pushed event
 */
public record Event(long index, String id, String type, Object payload, Instant createdAt, int clearIndex,
		@Nullable Cause cause) {

	/** The payload as the given type; fails with a clear message when the contract bound another. */
	public <T> T payload(Class<T> payloadType) {
		if (!payloadType.isInstance(this.payload)) {
			throw new ClassCastException("event " + this.index + " of type '" + this.type + "' carries a "
					+ this.payload.getClass().getName() + ", not a " + payloadType.getName());
		}
		return payloadType.cast(this.payload);
	}

}
