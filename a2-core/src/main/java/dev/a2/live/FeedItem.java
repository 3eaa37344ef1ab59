package dev.a2.live;

import java.util.List;

import dev.a2.store.StoredEvent;

/** What a session's feed tells one subscriber, in order. */
public sealed interface FeedItem {

	/**
	 * The next events of the session, contiguous after what the subscriber had.
	 * @param events one or more events in index order
	 */
	record Events(List<StoredEvent> events) implements FeedItem {

		public long lastIndex() {
			return this.events.get(this.events.size() - 1).index();
		}

	}

	/**
	 * The session was cleared at {@code index} (the clear marker's): what the subscriber had before
	 * is gone, and the events that follow start after it.
	 */
	record Cleared(long index) implements FeedItem {
	}

	/**
	 * The store could not be read for the subscriber (PostgreSQL unreachable, a fault of the session's
	 * rows). The feed goes on: the subscriber stays where it was and reads again on the next change or
	 * poll, without a gap or a repeat. Told once per run of failed reads, as it began.
	 * @param cause why the read failed
	 */
	record Failed(Throwable cause) implements FeedItem {
	}

}
