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

	/**
	 * The earliest {@code at} a write may carry. No writer's clock reads before 1970 (epoch milliseconds
	 * are never negative), and the earliest instants PostgreSQL cannot store (before 4713 BC) or
	 * {@code java.sql.Timestamp} overflows on without a word: refused, they are a clear 400 rather than
	 * a 500 or a wrong time. Later instants need no bound: a future one is taken as the server's time.
	 */
	public static final Instant EARLIEST_AT = Instant.EPOCH;

	private PresenceRules() {
	}

	/**
	 * Checks the participant, the fields against the contract's presence fields, and that {@code at} is
	 * not before {@link #EARLIEST_AT}.
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
		Instant at = write.at();
		if (at != null && at.isBefore(EARLIEST_AT)) {
			throw invalid(where + "at must be " + EARLIEST_AT + " or later (epoch milliseconds of 0 or more), was " + at);
		}
		for (String field : write.values().keySet()) {
			if (!declared.containsKey(field)) {
				throw invalid(where + "values." + field + " is not a presence field of contract '" + contract + "'; it has "
						+ declared.keySet());
			}
		}
	}

	/** The write's timestamp: the server's time when absent or in the future (however far: nothing overflows). */
	public static Instant at(@Nullable Instant at, Instant now) {
		return (at == null || at.isAfter(now)) ? now : at;
	}

	private static A2Exception invalid(String message) {
		return new A2Exception(ErrorCode.INVALID_PAYLOAD, message);
	}

}
