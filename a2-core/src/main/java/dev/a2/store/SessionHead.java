package dev.a2.store;

/**
 * Where a session stands.
 *
 * @param lastIndex the index of its last event, clear markers included (0 when it has none)
 * @param clearIndex how many times it was cleared
 * @param clearedAt the index of its latest clear marker (0 when never cleared); history and state
 * start after it
 */
public record SessionHead(long lastIndex, int clearIndex, long clearedAt) {

	public static final SessionHead EMPTY = new SessionHead(0, 0, 0);

}
