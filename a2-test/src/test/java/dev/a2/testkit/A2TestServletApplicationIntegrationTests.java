package dev.a2.testkit;

import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.NewEvent;
import dev.a2.Session;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @A2Test} on a Spring MVC application secured as Spring Boot's guides write it: a
 * {@code SecurityFilterChain} bean built from the {@code HttpSecurity} that Boot's auto-configuration
 * provides, without {@code @EnableWebSecurity}. That bean exists only in a web application context,
 * so the kit must start the application as one (a mock environment, still without a server), or the
 * test of its consumers never starts.
 */
@A2Test(classes = A2TestServletApplicationIntegrationTests.Shop.class)
class A2TestServletApplicationIntegrationTests {

	record Note(String text) {
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Shop {

		@Bean
		Contract orders() {
			return Contract.builder("orders").event("order.placed", Note.class).event("order.shipped", Note.class).build();
		}

		@Bean
		Consumer shipper() {
			return Consumer.builder("orders", "shipper")
				.types("order.placed")
				.run((context) -> NewEvent.of("order.shipped", new Note("shipped")));
		}

		@Bean
		SecurityFilterChain security(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().authenticated())
				.httpBasic(Customizer.withDefaults())
				.build();
		}

	}

	@Autowired
	A2TestKit kit;

	@Autowired
	ApplicationContext context;

	@Test
	void theConsumersOfASecuredServletApplicationRun() {
		Session session = this.kit.session("orders", "servlet-1");
		session.append(NewEvent.of("order.placed", new Note("a lamp")));

		this.kit.drain();

		assertThat(session).hasEventTypes("order.placed", "order.shipped");
		assertThat(this.context.getBean(SecurityFilterChain.class)).isNotNull();
	}

}
