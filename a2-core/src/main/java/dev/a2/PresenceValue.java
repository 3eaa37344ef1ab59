package dev.a2;

import java.time.Instant;

/** STUB until the presence branch lands. */
public record PresenceValue(Object value, Instant at) {
}
