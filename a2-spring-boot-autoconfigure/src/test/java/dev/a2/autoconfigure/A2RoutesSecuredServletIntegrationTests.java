package dev.a2.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.a2.Contract;
import dev.a2.test.TestPostgres;
import dev.a2.web.A2Authorizer;
import dev.a2.web.A2Permission;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.csrf.CookieCsrfTokenRepository;
import org.springframework.security.web.csrf.CsrfTokenRequestAttributeHandler;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A2's routes in a Spring MVC application with Spring Security's servlet chain, set as security.md
 * says: the caller the chain authenticated is the one A2's authorizer sees, on the routes and the
 * stream; A2's refusals answer in its shape; a push needs the CSRF token as the application's own
 * routes do. An execution of their own (see the pom): Spring MVC and Spring Security on the classpath.
 */
@SpringBootTest(classes = A2RoutesSecuredServletIntegrationTests.SecuredMvcApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "a2.web.poll=200ms", "a2.web.reauthorize-every=200ms" })
class A2RoutesSecuredServletIntegrationTests {

	/** {@code "user/session"}: who a test removed from a session he reached. */
	static final Set<String> REMOVED = ConcurrentHashMap.newKeySet();

	private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {
	};

	record Said(String text) {
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class SecuredMvcApplication {

		@Bean
		Contract notes() {
			return Contract.builder("notes").event("said", Said.class).build();
		}

		/** security.md's chain, with A2's paths left to its authorizer (anonymous callers included). */
		@Bean
		SecurityFilterChain security(HttpSecurity http) throws Exception {
			CsrfTokenRequestAttributeHandler csrfHandler = new CsrfTokenRequestAttributeHandler();
			csrfHandler.setCsrfRequestAttributeName(null);
			return http
				.authorizeHttpRequests((requests) -> requests.requestMatchers("/error", "/a2/**")
					.permitAll()
					.anyRequest()
					.authenticated())
				.httpBasic(Customizer.withDefaults())
				.csrf((csrf) -> csrf.csrfTokenRepository(CookieCsrfTokenRepository.withHttpOnlyFalse())
					.csrfTokenRequestHandler(csrfHandler))
				.build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}a-pass").roles("USER").build(),
					User.withUsername("bob").password("{noop}b-pass").roles("USER").build());
		}

		/** Each user reaches the sessions named after him, unless a test removed him. */
		@Bean
		A2Authorizer a2Authorizer() {
			return (caller, permission, contract, session) -> caller != null && permission != A2Permission.OPERATE
					&& session.startsWith("user-" + caller.getName() + "-") && !REMOVED.contains(caller.getName() + "/" + session);
		}

	}

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("routessecuredservlet", registry::add);
	}

	@LocalServerPort
	private int port;

	private WebTestClient http;

	@BeforeEach
	void client() {
		this.http = WebTestClient.bindToServer().baseUrl("http://localhost:" + this.port).build();
	}

	@Test
	void theCallerTheChainAuthenticatedIsTheOneA2Asks() {
		this.http.get().uri("/a2/notes/sessions/user-alice-1/events")
			.headers((headers) -> headers.setBasicAuth("alice", "a-pass"))
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.head").isEqualTo(0);
		this.http.get().uri("/a2/notes/sessions/user-bob-1/events")
			.headers((headers) -> headers.setBasicAuth("alice", "a-pass"))
			.exchange()
			.expectStatus().isForbidden()
			.expectBody().jsonPath("$.error.code").isEqualTo("FORBIDDEN");
		this.http.get().uri("/a2/notes/sessions/user-alice-1/events")
			.exchange()
			.expectStatus().isUnauthorized()
			.expectBody().jsonPath("$.error.code").isEqualTo("UNAUTHORIZED");
	}

	@Test
	void aPushNeedsTheCsrfTokenAndThenReachesTheCallersStream() {
		// a GET writes the token's cookie, as for the application's own routes
		ResponseCookie token = this.http.get().uri("/a2/notes/sessions/user-alice-2/events")
			.headers((headers) -> headers.setBasicAuth("alice", "a-pass"))
			.exchange()
			.expectStatus().isOk()
			.returnResult(String.class)
			.getResponseCookies()
			.getFirst("XSRF-TOKEN");
		assertThat(token).as("the XSRF-TOKEN cookie").isNotNull();

		List<String> seen = new CopyOnWriteArrayList<>();
		Disposable stream = WebClient.create("http://localhost:" + this.port)
			.get()
			.uri("/a2/notes/sessions/user-alice-2/stream")
			.headers((headers) -> headers.setBasicAuth("alice", "a-pass"))
			.retrieve()
			.bodyToFlux(SSE)
			.subscribe((event) -> seen.add(event.event() + ":" + event.data()));
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> seen.stream().anyMatch((event) -> event.startsWith("presence:")));

			// without the token: Spring Security's refusal, before A2, and nothing is stored
			push("user-alice-2", null, null).expectStatus().isForbidden();
			push("user-alice-2", token, null).expectStatus().isForbidden();
			this.http.get().uri("/a2/notes/sessions/user-alice-2/events")
				.headers((headers) -> headers.setBasicAuth("alice", "a-pass"))
				.exchange()
				.expectBody().jsonPath("$.head").isEqualTo(0);

			push("user-alice-2", token, token.getValue()).expectStatus().isOk()
				.expectBody().jsonPath("$.events[0].index").isEqualTo(1);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> seen.stream().anyMatch((event) -> event.startsWith("events:") && event.contains("with the token")));
		}
		finally {
			stream.dispose();
		}
	}

	/**
	 * The servlet's stream is asked again ({@code a2.web.reauthorize-every}) whether its caller may still
	 * read: it went on for as long as the connection held once the caller was removed.
	 */
	@Test
	void aStreamWhoseCallerWasRemovedEndsAndItsReconnectIsRefused() {
		String session = "user-alice-3";
		WebClient client = WebClient.create("http://localhost:" + this.port);
		List<ServerSentEvent<String>> seen = new CopyOnWriteArrayList<>();
		Disposable stream = client.get()
			.uri("/a2/notes/sessions/" + session + "/stream")
			.headers((headers) -> headers.setBasicAuth("alice", "a-pass"))
			.retrieve()
			.bodyToFlux(SSE)
			.doOnNext(seen::add)
			.then(Mono.fromRunnable(() -> seen.add(ServerSentEvent.<String>builder().event("ended").build())))
			.subscribe();
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> seen.stream().anyMatch((event) -> "presence".equals(event.event())));
			REMOVED.add("alice/" + session);
			await().atMost(Duration.ofSeconds(20)).until(() -> seen.stream().anyMatch((event) -> "ended".equals(event.event())));
			assertThat(seen.get(seen.size() - 2).comment()).contains("may no longer read this session");
			this.http.get().uri("/a2/notes/sessions/" + session + "/stream")
				.headers((headers) -> headers.setBasicAuth("alice", "a-pass"))
				.exchange()
				.expectStatus().isForbidden()
				.expectBody().jsonPath("$.error.code").isEqualTo("FORBIDDEN");
		}
		finally {
			stream.dispose();
			REMOVED.clear();
		}
	}

	private WebTestClient.ResponseSpec push(String session, ResponseCookie cookie, String header) {
		return this.http.post().uri("/a2/notes/sessions/" + session + "/events")
			.headers((headers) -> {
				headers.setBasicAuth("alice", "a-pass");
				if (header != null) {
					headers.set("X-XSRF-TOKEN", header);
				}
			})
			.cookies((cookies) -> {
				if (cookie != null) {
					cookies.add(cookie.getName(), cookie.getValue());
				}
			})
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"said\",\"payload\":{\"text\":\"with the token\"}}]}")
			.exchange();
	}

}
