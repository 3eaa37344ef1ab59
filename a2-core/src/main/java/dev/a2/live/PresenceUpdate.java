package dev.a2.live;

import java.util.List;

import dev.a2.PresencePatch;
import dev.a2.PresenceSnapshot;

/** What a presence subscriber is told: a snapshot first, then patches. */
public sealed interface PresenceUpdate {

	/** Everyone's presence now. */
	record Snapshot(PresenceSnapshot snapshot) implements PresenceUpdate {
	}

	/** What changed since the subscriber's last update; expiry and removal are patches with no value. */
	record Patches(List<PresencePatch> patches) implements PresenceUpdate {
	}

}
