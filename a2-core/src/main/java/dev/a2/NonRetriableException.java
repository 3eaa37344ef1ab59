package dev.a2;

/**
 * Thrown by a consumer run that must not be retried: its unit is dead-lettered at once.
 */
public class NonRetriableException extends RuntimeException {

	/** A failure that dead-letters the unit at once. */
	public NonRetriableException(String message) {
		super(message);
	}

	/** A failure that dead-letters the unit at once, with its cause. */
	public NonRetriableException(String message, Throwable cause) {
		super(message, cause);
	}

}
