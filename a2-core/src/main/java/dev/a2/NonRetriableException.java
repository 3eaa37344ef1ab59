package dev.a2;

/**
 * Thrown by a consumer run that must not be retried: its unit is dead-lettered at once.
 */
public class NonRetriableException extends RuntimeException {

	public NonRetriableException(String message) {
		super(message);
	}

	public NonRetriableException(String message, Throwable cause) {
		super(message, cause);
	}

}
