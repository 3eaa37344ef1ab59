package dev.a2;

import java.util.Comparator;
import java.util.List;
import java.util.Set;

import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validator;

/**
 * Enforces the Jakarta Bean Validation constraints of payload types ({@code @NotBlank},
 * {@code @Size}, {@code @Valid} on nested records …).
 */
public final class BeanValidationPayloadValidator implements PayloadValidator {

	private final Validator validator;

	/** Checks payloads with this Jakarta Bean Validation validator. */
	public BeanValidationPayloadValidator(Validator validator) {
		this.validator = validator;
	}

	@Override
	public List<Violation> validate(Object payload) {
		Set<ConstraintViolation<Object>> violations = this.validator.validate(payload);
		if (violations.isEmpty()) {
			return List.of();
		}
		return violations.stream()
			.map((violation) -> new Violation(violation.getPropertyPath().toString(), violation.getMessage()))
			.sorted(Comparator.comparing(Violation::path))
			.toList();
	}

}
