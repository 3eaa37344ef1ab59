package dev.a2.web;

/** What a caller asks to do with a session. */
public enum A2Permission {

	/** Read history, state and presence, and stream the session (over HTTP, SSE and the socket). */
	READ,

	/** Append events: a push over HTTP or the socket, with the presence write it may carry. */
	PUSH,

	/** Write presence. */
	PRESENCE,

	/** Clear the session. */
	CLEAR,

	/**
	 * Operate A2 through the {@code a2} actuator endpoint and its console: read a session's events
	 * there and redrive its dead letters, and, {@linkplain A2Access#acrossSessions() across sessions},
	 * the overview and the dead letters of every session.
	 */
	OPERATE

}
