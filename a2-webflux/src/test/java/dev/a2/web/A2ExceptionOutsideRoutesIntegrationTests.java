package dev.a2.web;

import java.util.Map;

import dev.a2.A2Server;
import dev.a2.NewEvent;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Profile;
import org.springframework.http.MediaType;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

import static dev.a2.web.A2RoutesIntegrationTests.assertNothingStored;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@code A2Exception} thrown from the application's own WebFlux code, an annotated controller or
 * a functional route, answers the status of its code with a problem body (RFC 9457), never a 500.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
@Import({ A2ExceptionOutsideRoutesIntegrationTests.Outside.class,
		A2ExceptionOutsideRoutesIntegrationTests.MessagesController.class })
@ActiveProfiles(A2ExceptionOutsideRoutesIntegrationTests.PROFILE)
class A2ExceptionOutsideRoutesIntegrationTests {

	/** Keeps the beans below out of the other tests' applications, which scan this package. */
	static final String PROFILE = "outside-routes-tests";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("outside_routes", registry::add);
	}

	@Autowired
	private WebTestClient client;

	private WebTestClient http;

	@BeforeEach
	void patientClient() {
		this.http = A2RoutesIntegrationTests.patient(this.client);
	}

	@Test
	void anInvalidAppendInAControllerAnswers400WithAProblem() {
		JsonNode problem = problem(this.http.post().uri("/messages").exchange(), 400, "INVALID_PAYLOAD");
		assertThat(problem.get("detail").asString()).contains("events[0].payload");
		assertNothingStored(this.http, "x");
	}

	@Test
	void anUnknownContractInAControllerAnswers404WithAProblem() {
		JsonNode problem = problem(this.http.get().uri("/messages/unknown").exchange(), 404, "UNKNOWN_CONTRACT");
		assertThat(problem.get("detail").asString()).contains("nope");
	}

	@Test
	void anUnknownContractInAFunctionalRouteAnswers404WithAProblem() {
		JsonNode problem = problem(this.http.get().uri("/functional/unknown").exchange(), 404, "UNKNOWN_CONTRACT");
		assertThat(problem.get("detail").asString()).contains("nope");
	}

	@Test
	void aValidAppendInAControllerIsStored() {
		EntityExchangeResult<String> result = this.http.post().uri("/messages/valid").exchange().expectBody(String.class)
			.returnResult();
		assertThat(result.getStatus().value()).as(result.getResponseBody()).isEqualTo(200);
		assertThat(A2RoutesIntegrationTests.indexes(A2RoutesIntegrationTests.history(this.http, "valid", "")))
			.containsExactly(1L);
	}

	/** A2 answers the paths under its base path no route took; a route of the application's own there still answers. */
	@Test
	void anApplicationsOwnRouteUnderTheBasePathStillAnswers() {
		this.http.get().uri("/a2/extras/own").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("own");
	}

	private static JsonNode problem(WebTestClient.ResponseSpec response, int status, String code) {
		EntityExchangeResult<byte[]> result = response.expectBody().returnResult();
		String body = (result.getResponseBody() != null) ? new String(result.getResponseBody()) : "";
		assertThat(result.getStatus().value()).as("status; body %s", body).isEqualTo(status);
		assertThat(result.getResponseHeaders().getContentType()).as("content type; body %s", body).isNotNull()
			.matches((type) -> type.isCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON), "application/problem+json");
		JsonNode problem = A2RoutesIntegrationTests.json.readTree(body);
		assertThat(problem.path("status").asInt()).as(body).isEqualTo(status);
		assertThat(problem.path("code").asString()).as("the code is a top-level member: %s", body).isEqualTo(code);
		assertThat(problem.path("title").asString()).as(body).isEqualTo(code);
		assertThat(problem.path("detail").asString()).as(body).isNotBlank();
		return problem;
	}

	@RestController
	@Profile(PROFILE)
	static class MessagesController {

		private final A2Server a2;

		MessagesController(A2Server a2) {
			this.a2 = a2;
		}

		/** JDBC blocks: off the event loop, as a WebFlux application calls A2. */
		@PostMapping("/messages")
		Mono<String> append() {
			return Mono.fromCallable(() -> {
				this.a2.session("chat", "x").append(NewEvent.of("message.sent", Map.of("text", "")));
				return "stored";
			}).subscribeOn(Schedulers.boundedElastic());
		}

		@PostMapping("/messages/valid")
		Mono<String> appendValid() {
			return Mono.fromCallable(() -> {
				this.a2.session("chat", "valid").append(NewEvent.of("message.sent", Map.of("text", "hi", "author", "ann")));
				return "stored";
			}).subscribeOn(Schedulers.boundedElastic());
		}

		@GetMapping("/messages/unknown")
		String unknown() {
			this.a2.session("nope", "x");
			return "never";
		}

	}

	@TestConfiguration(proxyBeanMethods = false)
	@Profile(PROFILE)
	static class Outside {

		@Bean
		RouterFunction<ServerResponse> functionalRoutes(A2Server a2) {
			return RouterFunctions.route()
				.GET("/functional/unknown", (request) -> {
					a2.contract("nope");
					return ServerResponse.ok().bodyValue("never");
				})
				.GET("/a2/extras/own", (request) -> ServerResponse.ok().bodyValue("own"))
				.build();
		}

	}

}
