package dev.a2;

import java.time.Instant;

/**
 * The value of one presence field and the writer's timestamp it carries.
 *
 * @param value the value, bound to the field's declared type
 * @param at when its writer wrote it
 */
public record PresenceValue(Object value, Instant at) {
}
