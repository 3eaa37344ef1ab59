package dev.a2.autoconfigure;

import java.util.List;
import java.util.Map;

import dev.a2.Contract;
import dev.a2.autoconfigure.OrdersApplication.Poison;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code a2} actuator endpoint in a Spring MVC application on Tomcat, where Boot's servlet
 * endpoint machinery reads the operations' bodies. These tests run in an execution of their own, with
 * Spring MVC on the classpath (see the pom): the others are WebFlux applications. Run without it, this
 * application fails to start rather than start as a WebFlux one.
 */
@SpringBootTest(classes = A2EndpointServletIntegrationTests.ServletApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "management.endpoints.web.exposure.include=a2,loggers" })
class A2EndpointServletIntegrationTests {

	/** Auto-configured only: a scan of this package would take the auto-configurations' nested classes too. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class ServletApplication {

		@Bean
		Contract orders() {
			return Contract.builder("orders").event("poison", Poison.class).build();
		}

	}

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("endpointservlet", registry::add);
	}

	@LocalServerPort
	private int port;

	private WebTestClient http;

	@BeforeEach
	void client() {
		this.http = WebTestClient.bindToServer().baseUrl("http://localhost:" + this.port).build();
	}

	/** operations.md: every operation answers its errors in A2's shape, in a servlet application too. */
	@Test
	void aRedriveWhoseBodyIsNoJsonObjectOfItsFieldsIsRefusedInA2sShape() {
		String fields = "\"session\":\"s\",\"consumer\":\"fragile\",\"action\":\"retry\"";
		for (String body : List.of("hello", "[]", "{\"contract\":[\"orders\"],\"index\":1," + fields + "}",
				"{\"contract\":\"orders\",\"index\":{}," + fields + "}")) {
			this.http.post().uri("/actuator/a2/redrive")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(body)
				.exchange()
				.expectStatus().isBadRequest()
				.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
				.jsonPath("$.error.message").value((message) -> assertThat((String) message).as(body).contains("JSON object"));
		}
		// a body that reads is the operation's to answer
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "s", "consumer", "fragile", "index", 1, "action", "skip"))
			.exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("NOT_DEAD_LETTERED");
	}

	/** §11: a redrive's field it does not have is refused naming it, in a servlet application too. */
	@Test
	void aRedriveWithAFieldItDoesNotHaveIsRefusedNamingIt() {
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "s", "consumer", "fragile", "index", 1, "action", "skip",
					"dryRun", true))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message)
				.startsWith("a redrive has no field 'dryRun'; its fields are action, consumer, contract, index, session"));
	}

	/** Another endpoint's unreadable body keeps Boot's answer: A2 speaks for its own endpoint only. */
	@Test
	void anotherEndpointsUnreadableBodyKeepsBootsAnswer() {
		this.http.post().uri("/actuator/loggers/ROOT")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("[]")
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error").isEqualTo("Bad Request").jsonPath("$.status").isEqualTo(400);
	}

}
