package dev.a2;

/**
 * Which consumer run wrote an event: the consumer, the lane of the unit, the index of the
 * triggering event and the attempt.
 */
public record Cause(String consumer, String lane, long index, int attempt) {
}
