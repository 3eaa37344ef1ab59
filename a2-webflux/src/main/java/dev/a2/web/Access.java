package dev.a2.web;

import java.security.Principal;
import java.time.Duration;
import java.time.Instant;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.Contract;
import dev.a2.ErrorCode;
import dev.a2.NewEvent;
import dev.a2.PresenceWrite;
import dev.a2.Session;
import org.jspecify.annotations.Nullable;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.oauth2.core.OAuth2Token;
import org.springframework.util.ClassUtils;

/**
 * Opens the session a caller asks for, in the order that tells a stranger nothing: the authorizer
 * first, then whether the contract and session exist, then the rules no authorizer lifts (server-only
 * event types, presence as oneself). Blocks when the authorizer does: call it on a store thread.
 */
final class Access {

	private static final boolean SPRING_SECURITY = ClassUtils.isPresent(
			"org.springframework.security.authentication.AnonymousAuthenticationToken", Access.class.getClassLoader());

	private static final boolean OAUTH2 = SPRING_SECURITY
			&& ClassUtils.isPresent("org.springframework.security.oauth2.core.OAuth2Token", Access.class.getClassLoader());

	/**
	 * How long a stream or socket opened with credentials already past their expiry stays open. A token
	 * decoder accepts a token a little after its expiry (Spring Security's JWT decoder, 60 s of clock
	 * skew by default): ended at once, such a stream would be reopened with the same token and ended
	 * again, in a loop, until the decoder refuses it.
	 */
	static final Duration EXPIRED_GRACE = Duration.ofMinutes(1);

	private final A2Server server;

	private final A2Authorizer authorizer;

	private final PresenceParticipant participants;

	Access(A2Server server, A2Authorizer authorizer, PresenceParticipant participants) {
		this.server = server;
		this.authorizer = authorizer;
		this.participants = participants;
	}

	/** The session, once the caller may do what it asks there and what it writes keeps the rules. */
	Session open(@Nullable Principal caller, A2Access access) {
		check(this.authorizer, caller, access);
		Session session = this.server.session(String.valueOf(access.contract()), String.valueOf(access.session()));
		Contract contract = session.contract();
		for (NewEvent event : access.events()) {
			if (contract.isServerOnly(event.type())) {
				throw new A2Exception(ErrorCode.FORBIDDEN, "event type '" + event.type() + "' is written by the server only: "
						+ "clients may not push it");
			}
		}
		PresenceWrite presence = access.presence();
		if (presence != null && caller != null && this.participants == PresenceParticipant.CALLER
				&& !presence.participant().equals(caller.getName())) {
			throw new A2Exception(ErrorCode.FORBIDDEN, "'" + caller.getName() + "' may write presence only as participant '"
					+ caller.getName() + "', not as '" + presence.participant() + "'");
		}
		return session;
	}

	/**
	 * How long a stream or socket the caller opens now may stay open, or {@code null} for as long as it
	 * lasts: until the caller's credentials expire ({@link A2Authorizer#validUntil(Principal)}), or
	 * {@link #EXPIRED_GRACE} when they have already.
	 */
	@Nullable Duration openFor(@Nullable Principal caller) {
		return openFor(this.authorizer.validUntil(caller), this.server.clock().instant());
	}

	static @Nullable Duration openFor(@Nullable Instant validUntil, Instant now) {
		if (validUntil == null) {
			return null;
		}
		Duration left = Duration.between(now, validUntil);
		return (left.isNegative() || left.isZero()) ? EXPIRED_GRACE : left;
	}

	/** The expiry of the OAuth2 token the caller authenticated with, or {@code null} for any other caller. */
	static @Nullable Instant tokenExpiry(@Nullable Principal caller) {
		return (caller != null && OAUTH2) ? OAuth2Tokens.expiry(caller) : null;
	}

	/** Spring Security's OAuth2 types, loaded only when they are present. */
	private static final class OAuth2Tokens {

		/** A resource server's authentications (a JWT's, an introspected token's) hold the token as their credentials. */
		static @Nullable Instant expiry(Principal caller) {
			return (caller instanceof Authentication authentication && authentication.getCredentials() instanceof OAuth2Token token)
					? token.getExpiresAt() : null;
		}

	}

	/**
	 * The caller of a request or socket: its principal, or {@code null} when it is anonymous. Spring
	 * Security's anonymous authentication ({@code ServerHttpSecurity.anonymous()}) is a principal named
	 * {@code anonymousUser}, but no one: refused, it is told to log in (401), never that
	 * "anonymousUser" may not (403), and it does not write presence as a participant of that name.
	 */
	static @Nullable Principal caller(@Nullable Principal principal) {
		return (principal != null && SPRING_SECURITY && SpringSecurity.isAnonymous(principal)) ? null : principal;
	}

	/** Spring Security's types, loaded only when it is present. */
	private static final class SpringSecurity {

		static boolean isAnonymous(Principal principal) {
			return principal instanceof AnonymousAuthenticationToken;
		}

	}

	/** Asks the authorizer, and turns a refusal into the error a caller sees. */
	static void check(A2Authorizer authorizer, @Nullable Principal caller, A2Access access) {
		if (authorizer.allows(caller, access)) {
			return;
		}
		String permission = access.permission().name().toLowerCase(java.util.Locale.ROOT);
		String where = access.acrossSessions() ? "across sessions"
				: "on session '" + access.session() + "' of contract '" + access.contract() + "'";
		if (caller == null) {
			throw new A2Exception(ErrorCode.UNAUTHORIZED, permission + " " + where + " needs an authenticated caller");
		}
		throw new A2Exception(ErrorCode.FORBIDDEN, "'" + caller.getName() + "' may not " + permission + " " + where);
	}

}
