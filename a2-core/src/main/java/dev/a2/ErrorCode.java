package dev.a2;

/**
 * The error codes of A2. Every failure a caller can act on carries one of them, and the web layer
 * answers with its HTTP status.
 */
public enum ErrorCode {

	/** A push, presence write or query parameter that breaks the rules of a session or contract. */
	INVALID_PAYLOAD(400),

	/** No contract of that name is registered. */
	UNKNOWN_CONTRACT(404),

	/** The contract has no reducer of that name. */
	UNKNOWN_REDUCER(404),

	/** No endpoint of A2 at that path under its base path. */
	NOT_FOUND(404),

	/** A path of A2 asked with a method it does not answer; the {@code Allow} header lists those it does. */
	METHOD_NOT_ALLOWED(405),

	/** An {@code ifLastIndex} condition no longer holds. */
	CONFLICT(409),

	/** {@code consume} met a dead-lettered head. */
	CONSUMER_DEAD_LETTERED(409),

	/** A request body over the configured limit. */
	PAYLOAD_TOO_LARGE(413),

	/** The caller is not authenticated. */
	UNAUTHORIZED(401),

	/** The caller may not do this. */
	FORBIDDEN(403),

	/** PostgreSQL cannot be reached; the request changed nothing. */
	STORE_UNAVAILABLE(503),

	/** An unexpected failure of the server; its log has the details. */
	INTERNAL(500),

	/** Abort reason: another attempt took over the unit of work. */
	SUPERSEDED_ATTEMPT(0),

	/** Abort reason: the attempt's lease lapsed before it finished, or the instance is stopping. */
	CLAIM_EXPIRED(0),

	/** Abort reason: an {@code abortOn} event arrived, or the session was cleared. */
	ABORTED(0);

	private final int httpStatus;

	ErrorCode(int httpStatus) {
		this.httpStatus = httpStatus;
	}

	/** The HTTP status this code is answered with, or 0 for abort reasons that never reach a client. */
	public int httpStatus() {
		return this.httpStatus;
	}

}
