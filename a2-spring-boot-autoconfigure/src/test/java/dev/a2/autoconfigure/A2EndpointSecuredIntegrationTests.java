package dev.a2.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.a2.A2Server;
import dev.a2.NewEvent;
import dev.a2.autoconfigure.OrdersApplication.OrderPlaced;
import dev.a2.autoconfigure.OrdersApplication.Poison;
import dev.a2.store.DeadLetter;
import dev.a2.test.TestPostgres;
import dev.a2.web.A2Authorizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.csrf.CookieServerCsrfTokenRepository;
import org.springframework.security.web.server.csrf.ServerCsrfTokenRequestAttributeHandler;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code a2} actuator endpoint in an application on Spring Security with A2's default authorizer:
 * users may use their sessions but not operate, so neither alice nor bob reads a session's events there,
 * redrives, or sees the overview and the dead letters; an operator ({@code ROLE_A2_OPERATOR}) does all of
 * it. Runs with Spring Security on the classpath (its own surefire execution).
 */
@SpringBootTest(classes = OrdersApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "a2.drain.sweep-interval=100ms", "management.endpoints.web.exposure.include=a2",
				"a2.console.enabled=true" })
@AutoConfigureWebTestClient
@Import(A2EndpointSecuredIntegrationTests.Security.class)
@EnabledIf(value = "springSecurityPresent", disabledReason = "runs in the surefire execution with Spring Security")
class A2EndpointSecuredIntegrationTests {

	static boolean springSecurityPresent() {
		return ClassUtils.isPresent(A2AuthorizationAutoConfiguration.SECURITY, null);
	}

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("endpointsecured", registry::add);
	}

	@Autowired
	private A2Server a2;

	@Autowired
	private A2Authorizer authorizer;

	@Autowired
	private WebTestClient http;

	@Test
	void theDefaultAuthorizerIsAuthenticatedCallersWithOperatorsByAuthority() {
		assertThat(this.authorizer).hasToString("A2Authorizer.authenticated(ROLE_A2_OPERATOR)");
	}

	@Test
	void usersNeitherReadNorRedriveASessionThroughTheEndpoint() {
		String session = "user-alice-" + UUID.randomUUID();
		this.a2.session("orders", session)
			.append(NewEvent.of("order.placed", new OrderPlaced("secret-sku", 1)), NewEvent.of("poison", new Poison("x")));
		DeadLetter dead = awaitDeadLetter(session);
		for (String user : List.of("bob", "alice")) {
			refused(as(user, this.http.get().uri("/actuator/a2/events?contract=orders&session={session}", session)), 403);
			refused(redrive(user, session, dead.index()), 403);
		}
		refused(this.http.get().uri("/actuator/a2/events?contract=orders&session={session}", session), 401);
		// nothing redriven: the dead letter is there, as dead as before
		assertThat(this.a2.deadLetters("orders", session, "fragile", 10)).singleElement()
			.satisfies((still) -> assertThat(still.attempts()).isEqualTo(dead.attempts()));
		// the operator reads and redrives
		as("olga", this.http.get().uri("/actuator/a2/events?contract=orders&session={session}", session)).exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.events[0].payload.sku").isEqualTo("secret-sku");
		redrive("olga", session, dead.index()).expectStatus().isOk().expectBody().jsonPath("$.redriven").isEqualTo(true);
		assertThat(this.a2.deadLetters("orders", session, "fragile", 10)).isEmpty();
	}

	@Test
	void usersSeeNeitherTheOverviewNorTheDeadLettersOfEverySession() {
		String session = "user-alice-" + UUID.randomUUID();
		this.a2.session("orders", session).append(NewEvent.of("poison", new Poison("y")));
		awaitDeadLetter(session);
		String message = refused(as("bob", this.http.get().uri("/actuator/a2")), 403);
		assertThat(message).contains("bob");
		refused(as("bob", this.http.get().uri("/actuator/a2/dead-letters")), 403);
		refused(as("bob", this.http.get().uri("/actuator/a2/dead-letters?contract=orders")), 403);
		refused(as("bob", this.http.get().uri("/actuator/a2/dead-letters?contract=orders&session={session}", session)), 403);
		as("olga", this.http.get().uri("/actuator/a2")).exchange().expectStatus().isOk()
			.expectBody().jsonPath("$.contracts[0].name").isEqualTo("orders");
		as("olga", this.http.get().uri("/actuator/a2/dead-letters?contract=orders&session={session}", session)).exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.length()").isEqualTo(1);
	}

	@Test
	void noContractIsNamedBeforeAuthorization() {
		String message = refused(as("bob", this.http.get().uri("/actuator/a2/events?contract=nope&session=s")), 403);
		assertThat(message).doesNotContain("orders");
		as("olga", this.http.get().uri("/actuator/a2/events?contract=nope&session=s")).exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("UNKNOWN_CONTRACT")
			.jsonPath("$.error.message").value((String text) -> assertThat(text).contains("nope").doesNotContain("orders"));
	}

	private DeadLetter awaitDeadLetter(String session) {
		return await().atMost(Duration.ofSeconds(30))
			.until(() -> this.a2.deadLetters("orders", session, "fragile", 10), (letters) -> letters.size() == 1)
			.get(0);
	}

	/** A skip: a retry would run the poison again, and it would be dead again at once. */
	private WebTestClient.ResponseSpec redrive(String user, String session, long index) {
		// the cookie and the header of a browser page's CSRF token: the console sends them so
		String token = UUID.randomUUID().toString();
		return as(user, this.http.post().uri("/actuator/a2/redrive"))
			.cookie("XSRF-TOKEN", token)
			.header("X-XSRF-TOKEN", token)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"contract\":\"orders\",\"session\":\"" + session + "\",\"consumer\":\"fragile\",\"index\":" + index
					+ ",\"action\":\"skip\"}")
			.exchange();
	}

	/** The refusal's message, checking its status and, for A2's own refusals, its code. */
	private String refused(WebTestClient.RequestHeadersSpec<?> request, int status) {
		return refused(request.exchange(), status);
	}

	private String refused(WebTestClient.ResponseSpec response, int status) {
		String[] message = { "" };
		response.expectStatus().isEqualTo(status);
		if (status == 403) {
			response.expectBody()
				.jsonPath("$.error.code").isEqualTo("FORBIDDEN")
				.jsonPath("$.error.message").value((String text) -> message[0] = text);
		}
		return message[0];
	}

	private static <S extends WebTestClient.RequestHeadersSpec<?>> S as(String user, S request) {
		request.headers((headers) -> headers.setBasicAuth(user, user + "-password"));
		return request;
	}

	/** Users alice and bob, operator olga; every route behind a login; CSRF tokens in a cookie. */
	@TestConfiguration(proxyBeanMethods = false)
	static class Security {

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("alice").password("{noop}alice-password").roles("USER").build(),
					User.withUsername("bob").password("{noop}bob-password").roles("USER").build(),
					User.withUsername("olga").password("{noop}olga-password").roles("USER", "A2_OPERATOR").build());
		}

		@Bean
		SecurityWebFilterChain security(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().authenticated())
				.httpBasic((basic) -> {
				})
				.csrf((csrf) -> csrf.csrfTokenRepository(CookieServerCsrfTokenRepository.withHttpOnlyFalse())
					.csrfTokenRequestHandler(new ServerCsrfTokenRequestAttributeHandler()))
				.build();
		}

	}

}
