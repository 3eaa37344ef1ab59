package dev.a2;

import org.jspecify.annotations.Nullable;

/**
 * An event to append.
 *
 * @param type an event type of the contract
 * @param payload the payload: an instance of the contract's type for {@code type}, or anything
 * Jackson can convert to it (a {@code JsonNode}, a {@code Map})
 * @param id the idempotency key, 1-256 characters, never shaped like a UUIDv5; {@code null} for a
 * random one
 */
public record NewEvent(String type, @Nullable Object payload, @Nullable String id) {

	/** An event to append, whose id A2 gives (random, or derived in a consumer's run). */
	public static NewEvent of(String type, Object payload) {
		return new NewEvent(type, payload, null);
	}

	/** An event to append with its own id: the same id again in the session is not appended twice. */
	public static NewEvent of(String type, Object payload, String id) {
		return new NewEvent(type, payload, id);
	}

}
