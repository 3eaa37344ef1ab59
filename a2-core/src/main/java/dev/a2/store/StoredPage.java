package dev.a2.store;

import java.util.List;

/**
 * A page of history and where the session stood, read together.
 *
 * @param events the events of the page
 * @param head the session's last index
 * @param clearedAt the index of the session's latest clear marker (0 when never cleared)
 */
public record StoredPage(List<StoredEvent> events, long head, long clearedAt) {

	public StoredPage(List<StoredEvent> events, long head) {
		this(events, head, 0);
	}

}
