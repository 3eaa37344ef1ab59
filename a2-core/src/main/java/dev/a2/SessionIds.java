package dev.a2;

import java.util.regex.Pattern;

/**
 * The rules of session ids.
 */
final class SessionIds {

	private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9._:~-]{1,256}");

	private SessionIds() {
	}

	static String check(String sessionId) {
		if (sessionId == null || !SESSION_ID.matcher(sessionId).matches()) {
			throw A2Exception.invalid("session id " + quote(sessionId)
					+ " must be 1-256 characters of letters, digits and . _ : ~ -");
		}
		return sessionId;
	}

	private static String quote(String value) {
		if (value == null) {
			return "null";
		}
		return "'" + ((value.length() > 40) ? value.substring(0, 40) + "…" : value) + "'";
	}

}
