package dev.a2.web;

import java.util.List;
import java.util.Objects;

import dev.a2.NewEvent;
import dev.a2.PresenceWrite;
import org.jspecify.annotations.Nullable;

/**
 * What a caller asks of A2, for {@link A2Authorizer#allows(java.security.Principal, A2Access)}: the
 * permission, the session it is about, and what it writes.
 *
 * @param permission what the caller asks to do
 * @param contract the contract's name as the caller sent it (not yet known to exist), or {@code null}
 * for an operation across contracts
 * @param session the session id as the caller sent it, or {@code null} for an operation
 * {@linkplain #acrossSessions() across sessions}
 * @param events the events of a push as sent, each with its type, its id ({@code null} when the
 * client gave none) and its payload as a {@code JsonNode} not yet bound; empty for anything else
 * @param presence the presence write of a push or a presence write, with its participant and fields;
 * {@code null} when there is none
 */
public record A2Access(A2Permission permission, @Nullable String contract, @Nullable String session,
		List<NewEvent> events, @Nullable PresenceWrite presence) {

	public A2Access {
		Objects.requireNonNull(permission, "permission");
		events = List.copyOf(events);
	}

	/** Reading, clearing or operating one session: nothing written. */
	public static A2Access of(A2Permission permission, String contract, String session) {
		return new A2Access(permission, contract, session, List.of(), null);
	}

	/** A push of events, and the presence write it may carry. */
	public static A2Access push(String contract, String session, List<NewEvent> events, @Nullable PresenceWrite presence) {
		return new A2Access(A2Permission.PUSH, contract, session, events, presence);
	}

	/** A presence write. */
	public static A2Access presence(String contract, String session, PresenceWrite write) {
		return new A2Access(A2Permission.PRESENCE, contract, session, List.of(), write);
	}

	/**
	 * An operator's view across sessions (the actuator's overview, the dead letters of every session):
	 * {@link A2Permission#OPERATE} with no session, and the contract when the view is of one.
	 */
	public static A2Access operations(@Nullable String contract) {
		return new A2Access(A2Permission.OPERATE, contract, null, List.of(), null);
	}

	/** Whether this is about no one session but many: the actuator's overview and dead letters. */
	public boolean acrossSessions() {
		return this.session == null;
	}

}
