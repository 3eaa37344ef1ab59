package dev.a2.web;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

/**
 * Decides whether a caller may act on a session; asked on every route and socket frame. It runs on
 * A2's store threads, never on an event loop, so it may read a database.
 * <p>
 * Without a bean of this type, A2 lets any authenticated caller in when Spring Security is on the
 * classpath, and everyone otherwise (with a warning at start-up).
 */
@FunctionalInterface
public interface A2Authorizer {

	/**
	 * @param caller the exchange's principal, or {@code null} for an anonymous caller
	 * @return whether the caller may; a refusal answers {@code UNAUTHORIZED} (401) to an anonymous
	 * caller and {@code FORBIDDEN} (403) to a known one
	 */
	boolean allows(@Nullable Principal caller, A2Permission permission, String contract, String session);

	/** Everyone may do everything. */
	static A2Authorizer permitAll() {
		return (caller, permission, contract, session) -> true;
	}

	/**
	 * Any caller Spring Security has authenticated, never an anonymous one: what A2's auto-configuration
	 * gives when Spring Security is present and the application has no authorizer of its own. Needs
	 * {@code spring-security-core} on the classpath.
	 */
	static A2Authorizer authenticated() {
		return AuthenticatedCallers.AUTHORIZER;
	}

}
