package dev.a2;

import java.util.Map;

/**
 * Everyone's presence in a session: participant → field → value, in name order. Removed and expired
 * fields are absent.
 */
public record PresenceSnapshot(Map<String, Map<String, PresenceValue>> participants) {

	/** No one present. */
	public static final PresenceSnapshot EMPTY = new PresenceSnapshot(Map.of());

}
