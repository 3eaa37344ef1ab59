package dev.a2.web;

/** As whom a caller may write presence, over HTTP and the socket. */
public enum PresenceParticipant {

	/**
	 * A caller with a name (a {@link java.security.Principal}) writes presence only as the participant of
	 * that name, alone and beside a push; an anonymous caller names any participant. The default.
	 */
	CALLER,

	/** A caller names any participant: the authorizer, which sees the write, decides. */
	ANY

}
