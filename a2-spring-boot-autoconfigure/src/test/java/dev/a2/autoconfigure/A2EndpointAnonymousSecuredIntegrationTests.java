package dev.a2.autoconfigure;

import dev.a2.test.TestPostgres;
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
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code a2} actuator endpoint in an application whose security chain lets every request through
 * with Spring Security's anonymous authentication ({@code ServerHttpSecurity.anonymous()}): its
 * {@code anonymousUser} is an anonymous caller there as on A2's routes (§12), told to log in (401
 * {@code UNAUTHORIZED}), never that "anonymousUser" may not operate (403). Runs with Spring Security on
 * the classpath (its own surefire execution).
 */
@SpringBootTest(classes = OrdersApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=a2")
@AutoConfigureWebTestClient
@Import(A2EndpointAnonymousSecuredIntegrationTests.AnonymousAllowed.class)
@EnabledIf(value = "springSecurityPresent", disabledReason = "runs in the surefire execution with Spring Security")
class A2EndpointAnonymousSecuredIntegrationTests {

	static boolean springSecurityPresent() {
		return ClassUtils.isPresent(A2AuthorizationAutoConfiguration.SECURITY, null);
	}

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("endpointanonymous", registry::add);
	}

	@Autowired
	private WebTestClient http;

	@Test
	void springSecuritysAnonymousUserIsUnauthorizedOnEveryOperation() {
		String overview = unauthorized(this.http.get().uri("/actuator/a2").exchange());
		assertThat(overview).contains("needs an authenticated caller").doesNotContain("anonymousUser");
		unauthorized(this.http.get().uri("/actuator/a2/dead-letters").exchange());
		unauthorized(this.http.get().uri("/actuator/a2/dead-letters?contract=orders&session=s").exchange());
		unauthorized(this.http.get().uri("/actuator/a2/events?contract=orders&session=s").exchange());
		unauthorized(this.http.post().uri("/actuator/a2/redrive").contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"contract\":\"orders\",\"session\":\"s\",\"consumer\":\"fragile\",\"index\":1,\"action\":\"skip\"}")
			.exchange());
	}

	private static String unauthorized(WebTestClient.ResponseSpec response) {
		String[] message = { "" };
		response.expectStatus().isUnauthorized()
			.expectBody()
			.jsonPath("$.error.code").isEqualTo("UNAUTHORIZED")
			.jsonPath("$.error.message").value((String text) -> message[0] = text);
		return message[0];
	}

	/** Every request let through with the anonymous authentication on; A2's default authorizer. */
	@TestConfiguration(proxyBeanMethods = false)
	static class AnonymousAllowed {

		@Bean
		SecurityWebFilterChain security(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.anonymous((anonymous) -> {
				})
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

	}

}
