package dev.a2.autoconfigure;

import java.util.List;

/**
 * A2's properties that cannot work, each as "{@code <property> must be <what>, was <value>}". An
 * {@link IllegalArgumentException}, as before, and of a type of its own so that
 * {@link A2PropertiesFailureAnalyzer} can report it as Spring Boot reports a property that does not bind,
 * instead of at the end of a chain of bean creation failures.
 */
final class A2PropertiesException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final List<String> problems;

	A2PropertiesException(List<String> problems) {
		super(String.join("; ", problems));
		this.problems = List.copyOf(problems);
	}

	/** Each wrong property, with its value and what it must be. */
	List<String> problems() {
		return this.problems;
	}

}
