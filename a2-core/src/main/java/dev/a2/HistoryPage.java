package dev.a2;

import java.util.List;

/**
 * A page of a session's history.
 *
 * @param events the events after the requested index, in index order, without clear markers and
 * without anything before the latest clear
 * @param head the session's last index when the page was read
 */
public record HistoryPage(List<Event> events, long head) {
}
