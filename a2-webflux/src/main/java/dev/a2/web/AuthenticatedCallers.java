package dev.a2.web;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;

/**
 * The authorizer with Spring Security present: any authenticated caller, never an anonymous one;
 * operating needs an authority besides.
 */
final class AuthenticatedCallers implements A2Authorizer {

	private final String operatorAuthority;

	AuthenticatedCallers(String operatorAuthority) {
		this.operatorAuthority = operatorAuthority;
	}

	@Override
	public boolean allows(@Nullable Principal caller, A2Permission permission, String contract, String session) {
		return allows(caller, permission);
	}

	@Override
	public boolean allows(@Nullable Principal caller, A2Access access) {
		return allows(caller, access.permission());
	}

	private boolean allows(@Nullable Principal caller, A2Permission permission) {
		if (!(caller instanceof Authentication authentication) || !authentication.isAuthenticated()
				|| authentication instanceof AnonymousAuthenticationToken) {
			return false;
		}
		if (permission != A2Permission.OPERATE) {
			return true;
		}
		for (GrantedAuthority authority : authentication.getAuthorities()) {
			if (this.operatorAuthority.equals(authority.getAuthority())) {
				return true;
			}
		}
		return false;
	}

	@Override
	public String toString() {
		return "A2Authorizer.authenticated(" + this.operatorAuthority + ")";
	}

}
