package dev.a2.live;

/**
 * A session changed: a hint to read it again, never the change itself. Receivers read the rows from
 * the store, so a change seen twice, late, or for a session nobody follows is harmless.
 *
 * @param kind what changed
 * @param contract the session's contract
 * @param session the session id
 * @param local whether the change was made by this instance
 */
public record SessionChange(Kind kind, String contract, String session, boolean local) {

	/** What changed in a session. */
	public enum Kind {

		/** Events were appended. */
		EVENTS('e'),

		/** Events were appended that created consumer work. */
		WORK('w'),

		/** The session was cleared. */
		CLEARED('c'),

		/** A presence write applied. */
		PRESENCE('p');

		private final char code;

		Kind(char code) {
			this.code = code;
		}

		/** The one character that names the kind on the wire between instances. */
		public char code() {
			return this.code;
		}

		/** The kind of that code, or {@code null} for a code this version does not know. */
		public static Kind of(char code) {
			for (Kind kind : values()) {
				if (kind.code == code) {
					return kind;
				}
			}
			return null;
		}

	}

}
