package dev.a2;

/**
 * A reducer's state of a session.
 *
 * @param index the index of the last event folded into it (0 for an empty session)
 * @param state the state
 */
public record SessionState<S>(long index, S state) {
}
