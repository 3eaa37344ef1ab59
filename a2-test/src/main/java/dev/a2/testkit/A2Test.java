package dev.a2.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.annotation.AliasFor;

/**
 * A Spring Boot test of an application's A2 consumers: the application starts without a web server
 * (in a mock web environment, so that what only a web application has, such as the {@code HttpSecurity}
 * a Spring MVC application's {@code SecurityFilterChain} is built from, is there as in production),
 * on a schema of the test class's own in a real PostgreSQL ({@link TestDatabase}), with the consumers
 * named in {@link #consumers()} (all when none is named), a manual drainer and a {@link VirtualClock}.
 * Tests take the {@link A2TestKit} with {@code @Autowired}; each test starts with no faults and an
 * empty journal.
 * <pre>{@code
 * @A2Test(consumers = "delivery")
 * class DeliveryTests {
 *
 *     @Autowired
 *     A2TestKit kit;
 *     ...
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.MOCK)
@ExtendWith(A2TestRequirements.class)
public @interface A2Test {

	/**
	 * The consumers that run, by name ({@code contract/name} where names repeat across contracts);
	 * empty for all of the application's. The others neither run nor get work.
	 */
	String[] consumers() default {};

	/** Properties of the test's application, as {@code key=value}. */
	@AliasFor(annotation = SpringBootTest.class, attribute = "properties")
	String[] properties() default {};

	/** The configuration to start, when it is not the {@code @SpringBootConfiguration} found from the test's package. */
	@AliasFor(annotation = SpringBootTest.class, attribute = "classes")
	Class<?>[] classes() default {};

}
