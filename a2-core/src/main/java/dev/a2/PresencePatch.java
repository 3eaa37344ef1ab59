package dev.a2;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/** STUB until the presence branch lands. */
public record PresencePatch(String participant, String field, @Nullable Object value, Instant at) {
}
