package dev.a2.web;

import java.net.URI;

import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static dev.a2.web.A2RoutesIntegrationTests.error;
import static dev.a2.web.A2RoutesIntegrationTests.events;
import static dev.a2.web.A2RoutesIntegrationTests.message;
import static dev.a2.web.A2RoutesIntegrationTests.push;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application that lets Spring Security's anonymous authentication reach A2's routes
 * ({@code ServerHttpSecurity.anonymous()}): its {@code anonymousUser} is an anonymous caller (§12), told
 * to log in (401 {@code UNAUTHORIZED}), never that "anonymousUser" may not (403), on every route and frame.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
@Import(AnonymousCallersIntegrationTests.AnonymousAllowed.class)
@ActiveProfiles(AnonymousCallersIntegrationTests.PROFILE)
class AnonymousCallersIntegrationTests {

	/** Keeps {@link AnonymousAllowed} out of the other tests' applications, which scan this package. */
	static final String PROFILE = "anonymous-callers-tests";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("anonymous", registry::add);
	}

	@Autowired
	private WebTestClient client;

	@LocalServerPort
	private int port;

	private WebTestClient http;

	@BeforeEach
	void patientClient() {
		this.http = A2RoutesIntegrationTests.patient(this.client);
	}

	@Test
	void springSecuritysAnonymousUserIsUnauthorizedOnEveryRouteAndFrame() {
		String read = error(this.http.get().uri("/a2/chat/sessions/anonymous/events").exchange(), 401, "UNAUTHORIZED");
		assertThat(read).doesNotContain("anonymousUser");
		error(this.http.get().uri("/a2/chat/sessions/anonymous/stream").accept(MediaType.TEXT_EVENT_STREAM).exchange(), 401,
				"UNAUTHORIZED");
		error(push(this.http, "anonymous", events(message("anon-1", "hi"))), 401, "UNAUTHORIZED");
		error(this.http.put().uri("/a2/chat/sessions/anonymous/presence").contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"participant\":\"ann\",\"values\":{\"typing\":true}}").exchange(), 401, "UNAUTHORIZED");
		error(this.http.delete().uri("/a2/chat/sessions/anonymous").exchange(), 401, "UNAUTHORIZED");
		try (TestSocket socket = new TestSocket(URI.create("ws://localhost:" + this.port + "/a2/chat/socket"), new HttpHeaders())) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"anonymous\"}");
			assertThat(socket.awaitFrame(TestSocket.type("error", "anonymous")).get("error").get("code").asString())
				.isEqualTo("UNAUTHORIZED");
		}
	}

	/** Every route open to Spring Security, with its anonymous authentication on; A2's default authorizer with it. */
	@TestConfiguration(proxyBeanMethods = false)
	@Profile(PROFILE)
	@EnableWebFluxSecurity
	static class AnonymousAllowed {

		@Bean
		SecurityWebFilterChain security(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.anonymous((anonymous) -> {
				})
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

		@Bean
		A2Authorizer authorizer() {
			return A2Authorizer.authenticated();
		}

	}

}
