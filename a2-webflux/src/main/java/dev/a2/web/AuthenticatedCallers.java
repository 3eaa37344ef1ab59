package dev.a2.web;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;

/** The authorizer with Spring Security present: any authenticated caller, never an anonymous one. */
final class AuthenticatedCallers {

	static final A2Authorizer AUTHORIZER = (caller, permission, contract, session) -> caller instanceof Authentication
			authentication && authentication.isAuthenticated() && !(authentication instanceof AnonymousAuthenticationToken);

	private AuthenticatedCallers() {
	}

}
