package dev.a2;

import org.jspecify.annotations.Nullable;

/**
 * Which consumer run wrote an event: the consumer, the lane of the unit ({@code null} for an
 * independent one), the index of the triggering event and the attempt.
 */
public record Cause(String consumer, @Nullable String lane, long index, int attempt) {
}
