package dev.a2;

import java.time.Instant;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/** STUB until the presence branch lands. */
public record PresenceWrite(String participant, Map<String, @Nullable Object> values, @Nullable Instant at) {
}
