package dev.a2.web;

import java.security.Principal;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import org.jspecify.annotations.Nullable;

/** Asks the authorizer, and turns a refusal into the error a caller sees. */
final class Access {

	private final A2Authorizer authorizer;

	Access(A2Authorizer authorizer) {
		this.authorizer = authorizer;
	}

	/** Blocks when the authorizer does: call it on a store thread. */
	void check(@Nullable Principal caller, A2Permission permission, String contract, String session) {
		if (this.authorizer.allows(caller, permission, contract, session)) {
			return;
		}
		if (caller == null) {
			throw new A2Exception(ErrorCode.UNAUTHORIZED,
					permission.name().toLowerCase() + " on session '" + session + "' needs an authenticated caller");
		}
		throw new A2Exception(ErrorCode.FORBIDDEN, "'" + caller.getName() + "' may not "
				+ permission.name().toLowerCase() + " on session '" + session + "' of contract '" + contract + "'");
	}

}
