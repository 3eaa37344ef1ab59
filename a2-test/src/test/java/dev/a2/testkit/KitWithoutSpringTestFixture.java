package dev.a2.testkit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

/**
 * An {@code @A2Test} class as a newcomer writes it, which {@link A2TestRequirementsTests} runs on a class
 * path without Spring's test support (its name keeps the build from running it on its own).
 */
@A2Test
class KitWithoutSpringTestFixture {

	@Autowired
	A2TestKit kit;

	@Test
	void usesTheKit() {
		this.kit.session("orders", "order-1");
	}

}
