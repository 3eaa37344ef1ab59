package dev.a2;

import java.util.Map;

/** STUB until the presence branch lands. */
public record PresenceSnapshot(Map<String, Map<String, PresenceValue>> participants) {
}
