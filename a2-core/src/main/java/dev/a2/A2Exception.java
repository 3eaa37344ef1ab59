package dev.a2;

import org.jspecify.annotations.Nullable;

/**
 * The one exception type of A2: it carries the {@link ErrorCode} that says what went wrong, and a
 * message that says how to put it right.
 */
public class A2Exception extends RuntimeException {

	/** What went wrong, as the code of §11 (it gives the HTTP status). */
	private final ErrorCode code;

	/** An error with its code and a message saying what was wrong and how to fix it. */
	public A2Exception(ErrorCode code, String message) {
		super(message);
		this.code = code;
	}

	/** An error with its code, a message and the failure that caused it. */
	public A2Exception(ErrorCode code, String message, @Nullable Throwable cause) {
		super(message, cause);
		this.code = code;
	}

	/** What went wrong; {@link ErrorCode#httpStatus()} is the status an endpoint answers. */
	public ErrorCode code() {
		return this.code;
	}

	static A2Exception invalid(String message) {
		return new A2Exception(ErrorCode.INVALID_PAYLOAD, message);
	}

}
