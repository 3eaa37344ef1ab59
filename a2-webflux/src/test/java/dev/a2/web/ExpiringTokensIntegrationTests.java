package dev.a2.web;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

import com.nimbusds.jose.jwk.source.ImmutableSecret;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Profile;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.oauth2.jose.jws.MacAlgorithm;
import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtClaimsSet;
import org.springframework.security.oauth2.jwt.JwtEncoderParameters;
import org.springframework.security.oauth2.jwt.JwtTimestampValidator;
import org.springframework.security.oauth2.jwt.NimbusJwtEncoder;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A stream or socket opened with a bearer token ends when the token expires (docs/security.md): the
 * token's reader was refused on every new request, but went on reading the session's live events for
 * as long as the connection held. The client then reconnects with the token it has by then.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(ExpiringTokensIntegrationTests.BearerTokens.class)
@ActiveProfiles(ExpiringTokensIntegrationTests.PROFILE)
class ExpiringTokensIntegrationTests {

	/** Keeps {@link BearerTokens} out of the other tests' applications, which scan this package. */
	static final String PROFILE = "expiring-tokens-tests";

	private static final SecretKey KEY = new SecretKeySpec(
			"a key of thirty-two bytes or more for HS256 tokens".getBytes(StandardCharsets.UTF_8), "HmacSHA256");

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("tokens", registry::add);
	}

	@LocalServerPort
	private int port;

	@Test
	void aStreamEndsWhenItsTokenExpiresAndThatTokenCannotOpenAnother() {
		String session = "expiring-stream";
		String shortLived = token("alice", Duration.ofSeconds(3));
		String longLived = token("alice", Duration.ofHours(1));
		WebClient http = WebClient.create("http://localhost:" + this.port);
		List<ServerSentEvent<String>> staying = new CopyOnWriteArrayList<>();
		Disposable stayingOpen = stream(http, session, longLived).subscribe(staying::add);
		try {
			List<ServerSentEvent<String>> expiring = stream(http, session, shortLived).collectList()
				.block(Duration.ofSeconds(30));
			assertThat(expiring).as("the frames until the stream ended").isNotNull();
			assertThat(expiring.get(expiring.size() - 1).comment()).contains("credentials expired");

			// the stream of the token that holds goes on: an event pushed after the other ended reaches it
			push(http, session, longLived, "after-expiry");
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(staying)
				.anySatisfy((frame) -> assertThat(frame.data()).contains("after-expiry")));

			// the expired token's reconnect is refused: its reader sees no more of the session
			assertThatThrownBy(() -> stream(http, session, shortLived).blockFirst(Duration.ofSeconds(20)))
				.isInstanceOfSatisfying(WebClientResponseException.class,
						(refused) -> assertThat(refused.getStatusCode()).isEqualTo(HttpStatus.UNAUTHORIZED));
		}
		finally {
			stayingOpen.dispose();
		}
	}

	@Test
	void aSocketClosesWhenItsTokenExpiresSayingWhy() {
		HttpHeaders expiring = new HttpHeaders();
		expiring.setBearerAuth(token("alice", Duration.ofSeconds(3)));
		HttpHeaders holding = new HttpHeaders();
		holding.setBearerAuth(token("alice", Duration.ofHours(1)));
		URI uri = URI.create("ws://localhost:" + this.port + "/a2/chat/socket");
		try (TestSocket staying = new TestSocket(uri, holding); TestSocket closing = new TestSocket(uri, expiring)) {
			closing.send("{\"type\":\"subscribe\",\"session\":\"expiring-socket\"}");
			closing.awaitFrame(TestSocket.type("subscribed"));
			await().atMost(Duration.ofSeconds(20)).until(() -> closing.closeStatus.get() != null);
			assertThat(closing.closeStatus.get().getCode()).isEqualTo(1008);
			assertThat(closing.closeStatus.get().getReason()).isEqualTo("the caller's credentials expired");

			staying.send("{\"type\":\"ping\"}");
			staying.awaitFrame(TestSocket.type("pong"));
			assertThat(staying.closeStatus.get()).isNull();
		}
	}

	private static Flux<ServerSentEvent<String>> stream(WebClient http, String session, String token) {
		return http.get()
			.uri("/a2/chat/sessions/{session}/stream", session)
			.headers((headers) -> headers.setBearerAuth(token))
			.accept(MediaType.TEXT_EVENT_STREAM)
			.retrieve()
			.bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			});
	}

	private static void push(WebClient http, String session, String token, String text) {
		http.post()
			.uri("/a2/chat/sessions/{session}/events", session)
			.headers((headers) -> headers.setBearerAuth(token))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"" + text + "\",\"author\":\"alice\"}}]}")
			.retrieve()
			.toBodilessEntity()
			.block(Duration.ofSeconds(20));
	}

	private static String token(String user, Duration lifetime) {
		Instant now = Instant.now();
		JwtClaimsSet claims = JwtClaimsSet.builder().subject(user).issuedAt(now).expiresAt(now.plus(lifetime)).build();
		return new NimbusJwtEncoder(new ImmutableSecret<>(KEY))
			.encode(JwtEncoderParameters.from(JwsHeader.with(MacAlgorithm.HS256).build(), claims))
			.getTokenValue();
	}

	/** Bearer tokens as docs/security.md configures them, read with no clock skew so that expiry is exact. */
	@TestConfiguration(proxyBeanMethods = false)
	@EnableWebFluxSecurity
	@Profile(PROFILE)
	static class BearerTokens {

		@Bean
		ReactiveJwtDecoder jwtDecoder() {
			NimbusReactiveJwtDecoder decoder = NimbusReactiveJwtDecoder.withSecretKey(KEY).macAlgorithm(MacAlgorithm.HS256).build();
			decoder.setJwtValidator(new JwtTimestampValidator(Duration.ZERO));
			return decoder;
		}

		@Bean
		SecurityWebFilterChain security(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().authenticated())
				.oauth2ResourceServer((server) -> server.jwt((jwt) -> {
				}))
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
		}

		@Bean
		A2Authorizer authorizer() {
			return A2Authorizer.authenticated();
		}

	}

}
