package dev.a2.presence;

import java.time.Instant;
import java.util.Map;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.PresenceWrite;
import dev.a2.store.StorableText;
import org.jspecify.annotations.Nullable;

/** What §9 asks of a presence write, checked before anything is bound or stored. */
public final class PresenceRules {

	/** The longest participant id. */
	public static final int MAX_PARTICIPANT = 128;

	private PresenceRules() {
	}

	/**
	 * Checks the participant and the fields against the contract's presence fields.
	 * @param where how the caller names the write, such as {@code presence.}, or empty
	 */
	public static void check(PresenceWrite write, Map<String, Class<?>> declared, String contract, String where) {
		String participant = write.participant();
		if (participant == null || participant.isEmpty() || participant.length() > MAX_PARTICIPANT) {
			throw invalid(where + "participant must be 1-" + MAX_PARTICIPANT + " characters");
		}
		if (!StorableText.isStorable(participant)) {
			throw invalid(StorableText.refusal(where + "participant"));
		}
		if (participant.equals("a2") || participant.startsWith("a2.")) {
			throw invalid(where + "participant '" + participant + "' is reserved: 'a2' and ids starting 'a2.' are A2's own");
		}
		if (write.values() == null || write.values().isEmpty()) {
			throw invalid(where + "values must name at least one field");
		}
		for (String field : write.values().keySet()) {
			if (!declared.containsKey(field)) {
				throw invalid(where + "values." + field + " is not a presence field of contract '" + contract + "'; it has "
						+ declared.keySet());
			}
		}
	}

	/** The write's timestamp: the server's time when absent or in the future. */
	public static Instant at(@Nullable Instant at, Instant now) {
		return (at == null || at.isAfter(now)) ? now : at;
	}

	private static A2Exception invalid(String message) {
		return new A2Exception(ErrorCode.INVALID_PAYLOAD, message);
	}

}
