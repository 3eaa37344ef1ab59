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

	public static NewEvent of(String type, Object payload) {
		return new NewEvent(type, payload, null);
	}

	public static NewEvent of(String type, Object payload, String id) {
		return new NewEvent(type, payload, id);
	}

}
