package dev.a2.drain;

import java.util.Collection;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import dev.a2.live.SessionChanges;

/**
 * The attempts running on this instance, by their claim's token. While an attempt is here, one whose
 * consumer has abortOn events follows its session, so that other instances tell this one the
 * session's events at once: adding and removing are where the follow starts and ends.
 */
final class RunningAttempts {

	private final Map<UUID, Running> byToken = new ConcurrentHashMap<>();

	private final SessionChanges changes;

	RunningAttempts(SessionChanges changes) {
		this.changes = changes;
	}

	/** An attempt starts here. */
	void add(Running run) {
		this.byToken.put(run.claim.token(), run);
		run.follow(this.changes);
	}

	/** An attempt is no longer running here: it ended, or it never started. */
	void remove(Running run) {
		this.byToken.remove(run.claim.token(), run);
		run.unfollow();
	}

	boolean contains(UUID token) {
		return this.byToken.containsKey(token);
	}

	/** The attempts running now, as the collection changes. */
	Collection<Running> all() {
		return this.byToken.values();
	}

	boolean isEmpty() {
		return this.byToken.isEmpty();
	}

	int size() {
		return this.byToken.size();
	}

}
