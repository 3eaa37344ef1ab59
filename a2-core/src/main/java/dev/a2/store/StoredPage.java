package dev.a2.store;

import java.util.List;

/**
 * A page of history and the session's last index, read together.
 */
public record StoredPage(List<StoredEvent> events, long head) {
}
