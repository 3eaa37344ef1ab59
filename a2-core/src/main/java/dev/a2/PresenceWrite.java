package dev.a2;

import java.time.Instant;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A participant's presence write: the fields it sets (or removes, with {@code null}).
 *
 * @param participant who writes: 1-128 characters; {@code a2} and ids starting {@code a2.} are A2's
 * @param values field → value, each field declared by the contract; a value is an instance of the
 * field's type or anything Jackson converts to it; {@code null} removes the field
 * @param at the writer's timestamp; the latest wins per field. {@code null} for the server's time;
 * a time in the future is taken as the server's time
 */
public record PresenceWrite(String participant, Map<String, @Nullable Object> values, @Nullable Instant at) {

	/** A write at the server's time. */
	public static PresenceWrite of(String participant, Map<String, @Nullable Object> values) {
		return new PresenceWrite(participant, values, null);
	}

}
