package dev.a2.autoconfigure;

import java.time.Duration;
import java.util.UUID;

import dev.a2.A2Server;
import dev.a2.NewEvent;
import dev.a2.autoconfigure.OrdersApplication.Poison;
import dev.a2.store.DeadLetter;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code a2} endpoint and its console on a management port of their own
 * ({@code management.server.port}), as operations.md says: there and not on the application's port,
 * behind the same Spring Security chain (users refused, the operator served, a redrive needing its
 * CSRF token).
 */
@SpringBootTest(classes = OrdersApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "a2.drain.sweep-interval=100ms", "management.server.port=0",
				"management.endpoints.web.exposure.include=a2", "a2.console.enabled=true" })
@Import(A2EndpointSecuredIntegrationTests.Security.class)
@EnabledIf(value = "springSecurityPresent", disabledReason = "runs in the surefire execution with Spring Security")
class A2EndpointManagementPortSecuredIntegrationTests {

	static boolean springSecurityPresent() {
		return ClassUtils.isPresent(A2AuthorizationAutoConfiguration.SECURITY, null);
	}

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("managementport", registry::add);
	}

	@Autowired
	private A2Server a2;

	@LocalServerPort
	private int applicationPort;

	@LocalManagementPort
	private int managementPort;

	private WebTestClient management;

	private WebTestClient application;

	@BeforeEach
	void clients() {
		assertThat(this.managementPort).isNotEqualTo(this.applicationPort);
		this.management = WebTestClient.bindToServer().baseUrl("http://localhost:" + this.managementPort).build();
		this.application = WebTestClient.bindToServer().baseUrl("http://localhost:" + this.applicationPort).build();
	}

	@Test
	void theEndpointAndItsConsoleAnswerOnTheManagementPortOnly() {
		as("olga", this.management.get().uri("/actuator/a2")).exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.contracts[0].name").isEqualTo("orders");
		as("olga", this.management.get().uri("/actuator/a2/console")).exchange()
			.expectStatus().isOk()
			.expectHeader().contentTypeCompatibleWith(MediaType.TEXT_HTML);
		as("olga", this.application.get().uri("/actuator/a2")).exchange().expectStatus().isNotFound();
	}

	@Test
	void theManagementPortIsBehindTheApplicationsSecurity() {
		String session = "user-alice-" + UUID.randomUUID();
		this.a2.session("orders", session).append(NewEvent.of("poison", new Poison("z")));
		DeadLetter dead = await().atMost(Duration.ofSeconds(30))
			.until(() -> this.a2.deadLetters("orders", session, "fragile", 10), (letters) -> letters.size() == 1)
			.get(0);
		this.management.get().uri("/actuator/a2").exchange().expectStatus().isUnauthorized();
		as("bob", this.management.get().uri("/actuator/a2")).exchange()
			.expectStatus().isForbidden()
			.expectBody().jsonPath("$.error.code").isEqualTo("FORBIDDEN");
		// a redrive without the CSRF token is refused before it reaches the endpoint, and changes nothing;
		// sent as the first request of a connection of its own: Spring Security refuses it without reading its
		// body, and Reactor Netty 1.3 stops reading a keep-alive connection where a request came while such a
		// body was unread (reactor-netty#4361; A2UnreadBodyFilter covers A2's routes, not the actuator)
		WebTestClient ownConnection = WebTestClient
			.bindToServer(new ReactorClientHttpConnector(HttpClient.newConnection()))
			.baseUrl("http://localhost:" + this.managementPort)
			.build();
		as("olga", ownConnection.post().uri("/actuator/a2/redrive")).contentType(MediaType.APPLICATION_JSON)
			.header("Connection", "close")
			.bodyValue(redrive(session, dead.index()))
			.exchange()
			.expectStatus().isForbidden();
		assertThat(this.a2.deadLetters("orders", session, "fragile", 10)).hasSize(1);

		String token = UUID.randomUUID().toString();
		as("olga", this.management.post().uri("/actuator/a2/redrive")).cookie("XSRF-TOKEN", token)
			.header("X-XSRF-TOKEN", token)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(redrive(session, dead.index()))
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.redriven").isEqualTo(true);
		assertThat(this.a2.deadLetters("orders", session, "fragile", 10)).isEmpty();
	}

	private static String redrive(String session, long index) {
		return "{\"contract\":\"orders\",\"session\":\"" + session + "\",\"consumer\":\"fragile\",\"index\":" + index
				+ ",\"action\":\"skip\"}";
	}

	private static <S extends WebTestClient.RequestHeadersSpec<?>> S as(String user, S request) {
		request.headers((headers) -> headers.setBasicAuth(user, user + "-password"));
		return request;
	}

}
