package dev.a2.web;

import java.security.Principal;
import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Decides whether a caller may act on a session; asked on every route and socket frame, again for
 * {@link A2Permission#READ} on an open SSE stream or socket subscription every
 * {@link A2WebSettings#reauthorizeEvery()} (which ends when refused), and by the {@code a2} actuator
 * endpoint. It runs on A2's store threads (or the actuator's), never on an event
 * loop, so it may read a database.
 * <p>
 * A lambda decides from the permission, the contract and the session:
 * <pre class="code">
 * A2Authorizer ownSessions = (caller, permission, contract, session) -&gt; caller != null
 *     &amp;&amp; permission != A2Permission.OPERATE &amp;&amp; session.startsWith(caller.getName() + "-");
 * </pre>
 * An authorizer that must also see what is written (the types and ids of a push's events, the
 * participant and fields of a presence write) or allow the actuator's views across sessions
 * overrides {@link #allows(Principal, A2Access)}, which A2 calls.
 * <p>
 * Whatever the authorizer says, clients never push a contract's
 * {@linkplain dev.a2.Contract#serverOnly() server-only} event types, and a caller with a name writes
 * presence only as that participant unless the endpoints are set to let any participant through.
 * <p>
 * Without a bean of this type, A2 lets any authenticated caller read, push, write presence and clear
 * when Spring Security is on the classpath, and operate only with the authority
 * {@value #OPERATOR_AUTHORITY}; without Spring Security it lets everyone do everything (with a
 * warning at start-up).
 */
@FunctionalInterface
public interface A2Authorizer {

	/** The authority {@link #authenticated()} asks of an operator. */
	String OPERATOR_AUTHORITY = "ROLE_A2_OPERATOR";

	/**
	 * Whether the caller may act on one session.
	 * @param caller the exchange's principal, or {@code null} for an anonymous caller (and over JMX)
	 * @param contract the contract's name as the caller sent it: it may not exist
	 * @param session the session's id as the caller sent it
	 * @return whether the caller may; a refusal answers {@code UNAUTHORIZED} (401) to an anonymous
	 * caller and {@code FORBIDDEN} (403) to a known one
	 */
	boolean allows(@Nullable Principal caller, A2Permission permission, String contract, String session);

	/**
	 * Whether the caller may do what it asks, seeing what it writes; A2 asks this method. By default it
	 * asks {@link #allows(Principal, A2Permission, String, String)} about the session, and refuses what
	 * spans {@linkplain A2Access#acrossSessions() sessions} (the actuator's overview and dead letters of
	 * every session): override it to let operators see them.
	 */
	default boolean allows(@Nullable Principal caller, A2Access access) {
		if (access.contract() == null || access.session() == null) {
			return false;
		}
		return allows(caller, access.permission(), access.contract(), access.session());
	}

	/**
	 * Until when the caller's credentials hold: a stream or socket the caller opens ends then, and the
	 * client's reconnect presents what it has by then (a refreshed token goes on, an expired one is
	 * refused). Asked once as each stream or socket opens, on a store thread. By default the expiry of
	 * the OAuth2 token the caller authenticated with (a JWT's {@code exp}, an introspected token's), when
	 * Spring Security's OAuth2 support is on the classpath; {@code null}, no end, for any other caller,
	 * such as a login session, whose end a stream does not see.
	 * @param caller as for {@link #allows(Principal, A2Access)}
	 */
	default @Nullable Instant validUntil(@Nullable Principal caller) {
		return Access.tokenExpiry(caller);
	}

	/**
	 * The caller an authorizer is asked about for a request's principal: the principal, or {@code null}
	 * when there is none or it is Spring Security's anonymous authentication ({@code anonymousUser}), which
	 * stands for no one. A2's routes, socket and actuator endpoint ask about this caller, so a refusal tells
	 * an anonymous caller to log in (401), never that "anonymousUser" may not (403).
	 */
	static @Nullable Principal caller(@Nullable Principal principal) {
		return Access.caller(principal);
	}

	/** Everyone may do everything, operations across sessions included. */
	static A2Authorizer permitAll() {
		return PermitAll.AUTHORIZER;
	}

	/**
	 * Any caller Spring Security has authenticated, never an anonymous one, may read, push, write presence
	 * and clear; only one with the authority {@value #OPERATOR_AUTHORITY} may operate (the actuator). What
	 * A2's auto-configuration gives when Spring Security is present and the application has no authorizer
	 * of its own. Needs {@code spring-security-core} on the classpath.
	 */
	static A2Authorizer authenticated() {
		return authenticated(OPERATOR_AUTHORITY);
	}

	/**
	 * As {@link #authenticated()}, with operators named by another authority (such as
	 * {@code ROLE_ADMIN}).
	 */
	static A2Authorizer authenticated(String operatorAuthority) {
		return new AuthenticatedCallers(Objects.requireNonNull(operatorAuthority, "operatorAuthority"));
	}

}
