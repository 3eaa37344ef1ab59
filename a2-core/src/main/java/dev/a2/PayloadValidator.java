package dev.a2;

import java.util.List;

/**
 * Checks a bound payload. A2 rejects a payload with violations as {@code INVALID_PAYLOAD}, naming
 * the path of each, in the order answered. {@link BeanValidationPayloadValidator} adapts Jakarta Bean
 * Validation (its violations in the order of their paths).
 */
@FunctionalInterface
public interface PayloadValidator {

	/** The violations of {@code payload}; empty when it is valid. */
	List<Violation> validate(Object payload);

	/**
	 * @param path the path of the bad value inside the payload, such as {@code text} or
	 * {@code items[2].price}; empty for the payload as a whole
	 * @param message what is wrong with it
	 */
	record Violation(String path, String message) {
	}

}
