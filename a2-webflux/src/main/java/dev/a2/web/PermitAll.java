package dev.a2.web;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

/** Everyone may do everything. */
final class PermitAll implements A2Authorizer {

	static final PermitAll AUTHORIZER = new PermitAll();

	private PermitAll() {
	}

	@Override
	public boolean allows(@Nullable Principal caller, A2Permission permission, String contract, String session) {
		return true;
	}

	@Override
	public boolean allows(@Nullable Principal caller, A2Access access) {
		return true;
	}

}
