package dev.a2.testkit;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails an {@link A2Test} class whose test class path lacks Spring's test support, saying what to add.
 * {@code @A2Test} is a {@code @SpringBootTest}, and {@code spring-boot-test} and {@code spring-test} are
 * optional dependencies of {@code a2-test} (its JUnit extension needs neither): without them the JVM drops
 * the {@code @SpringBootTest} it cannot load, nothing starts the application, and the test ran with its
 * {@code @Autowired A2TestKit} {@code null}, failing with a {@code NullPointerException} that named neither.
 * This extension uses JUnit alone, so that it runs where Spring's does not.
 */
final class A2TestRequirements implements BeforeAllCallback {

	static final String SPRING_EXTENSION = "org.springframework.test.context.junit.jupiter.SpringExtension";

	static final String SPRING_BOOT_TEST = "org.springframework.boot.test.context.SpringBootTest";

	@Override
	public void beforeAll(ExtensionContext context) {
		ClassLoader loader = context.getRequiredTestClass().getClassLoader();
		for (String required : new String[] { SPRING_EXTENSION, SPRING_BOOT_TEST }) {
			try {
				Class.forName(required, false, loader);
			}
			catch (ClassNotFoundException | LinkageError ex) {
				throw new ExtensionConfigurationException("@A2Test on " + context.getRequiredTestClass().getSimpleName()
						+ " needs Spring Boot's test support, which is not on the test class path (" + required
						+ " is missing): add org.springframework.boot:spring-boot-starter-test in test scope beside "
						+ "dev.a2:a2-test");
			}
		}
	}

}
