package dev.a2;

import org.jspecify.annotations.Nullable;

/**
 * The one exception type of A2: it carries the {@link ErrorCode} that says what went wrong, and a
 * message that says how to put it right.
 */
public class A2Exception extends RuntimeException {

	private final ErrorCode code;

	public A2Exception(ErrorCode code, String message) {
		super(message);
		this.code = code;
	}

	public A2Exception(ErrorCode code, String message, @Nullable Throwable cause) {
		super(message, cause);
		this.code = code;
	}

	public ErrorCode code() {
		return this.code;
	}

	static A2Exception invalid(String message) {
		return new A2Exception(ErrorCode.INVALID_PAYLOAD, message);
	}

}
