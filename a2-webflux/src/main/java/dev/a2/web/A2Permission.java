package dev.a2.web;

/** What a caller asks to do with a session. */
public enum A2Permission {

	/** Read history, state and presence, and stream the session. */
	READ,

	/** Append events. */
	PUSH,

	/** Write presence. */
	PRESENCE,

	/** Clear the session. */
	CLEAR

}
