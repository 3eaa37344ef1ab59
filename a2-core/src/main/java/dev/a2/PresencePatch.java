package dev.a2;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A change of one presence field.
 *
 * @param participant whose field changed
 * @param field which field
 * @param value its new value, or {@code null} when it was removed or expired
 * @param at the writer's timestamp (for an expiry, when it was noticed)
 */
public record PresencePatch(String participant, String field, @Nullable Object value, Instant at) {
}
