package dev.a2.web;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.a2.NewEvent;
import dev.a2.PresenceWrite;
import org.junit.jupiter.api.Test;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationToken;

import static org.assertj.core.api.Assertions.assertThat;

/** The authorizers A2 ships. */
class A2AuthorizerTests {

	@Test
	void authenticatedLetsInOnlyCallersSpringSecurityAuthenticated() {
		A2Authorizer authorizer = A2Authorizer.authenticated();
		assertThat(authorizer.allows(null, A2Permission.READ, "chat", "s")).isFalse();
		assertThat(authorizer.allows(new AnonymousAuthenticationToken("key", "anonymous",
				AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS")), A2Permission.READ, "chat", "s")).isFalse();
		assertThat(authorizer.allows(UsernamePasswordAuthenticationToken.unauthenticated("ann", "secret"), A2Permission.READ,
				"chat", "s")).isFalse();
		assertThat(authorizer.allows(UsernamePasswordAuthenticationToken.authenticated("ann", null, List.of()),
				A2Permission.PUSH, "chat", "s")).isTrue();
	}

	@Test
	void authenticatedLetsOnlyOperatorsOperate() {
		A2Authorizer authorizer = A2Authorizer.authenticated();
		UsernamePasswordAuthenticationToken user = UsernamePasswordAuthenticationToken.authenticated("ann", null,
				AuthorityUtils.createAuthorityList("ROLE_USER"));
		UsernamePasswordAuthenticationToken operator = UsernamePasswordAuthenticationToken.authenticated("olga", null,
				AuthorityUtils.createAuthorityList("ROLE_USER", "ROLE_A2_OPERATOR"));
		assertThat(authorizer.allows(user, A2Permission.OPERATE, "chat", "s")).isFalse();
		assertThat(authorizer.allows(user, A2Access.operations(null))).isFalse();
		assertThat(authorizer.allows(operator, A2Permission.OPERATE, "chat", "s")).isTrue();
		assertThat(authorizer.allows(operator, A2Access.operations(null))).isTrue();
		assertThat(authorizer.allows(null, A2Access.operations(null))).isFalse();
		// operators by another authority
		A2Authorizer admins = A2Authorizer.authenticated("ROLE_ADMIN");
		assertThat(admins.allows(operator, A2Access.operations("chat"))).isFalse();
		assertThat(admins.allows(UsernamePasswordAuthenticationToken.authenticated("adam", null,
				AuthorityUtils.createAuthorityList("ROLE_ADMIN")), A2Access.operations("chat"))).isTrue();
	}

	@Test
	void permitAllLetsEveryoneIn() {
		assertThat(A2Authorizer.permitAll().allows(null, A2Permission.CLEAR, "chat", "s")).isTrue();
		assertThat(A2Authorizer.permitAll().allows(null, A2Access.operations(null))).isTrue();
	}

	@Test
	void aLambdaIsAskedAboutOneSessionWithWhatIsWrittenAndNeverAcrossSessions() {
		List<String> asked = new ArrayList<>();
		A2Authorizer lambda = (caller, permission, contract, session) -> asked.add(permission + " " + contract + "/" + session);
		assertThat(lambda.allows(null, A2Access.push("chat", "s", List.of(NewEvent.of("said", "hi")), null))).isTrue();
		assertThat(lambda.allows(null, A2Access.presence("chat", "s", PresenceWrite.of("ann", Map.of("typing", true)))))
			.isTrue();
		assertThat(lambda.allows(null, A2Access.operations("chat"))).isFalse();
		assertThat(asked).containsExactly("PUSH chat/s", "PRESENCE chat/s");
	}


	/** What ends the streams and sockets a caller opens (docs/security.md). */
	@Test
	void theDefaultExpiryIsTheBearerTokensAndNoneForOtherCallers() {
		Instant expiresAt = Instant.parse("2026-12-06T22:00:00Z");
		Jwt jwt = Jwt.withTokenValue("t").header("alg", "HS256").subject("alice").expiresAt(expiresAt).build();
		A2Authorizer authorizer = A2Authorizer.authenticated();
		assertThat(authorizer.validUntil(new JwtAuthenticationToken(jwt))).isEqualTo(expiresAt);
		assertThat(authorizer.validUntil(UsernamePasswordAuthenticationToken.authenticated("alice", "secret", List.of())))
			.isNull();
		assertThat(authorizer.validUntil(null)).isNull();
		assertThat(A2Authorizer.permitAll().validUntil(new JwtAuthenticationToken(jwt))).isEqualTo(expiresAt);
	}


	/**
	 * A token a decoder still accepts after its expiry (its clock skew) opens a stream for a minute, not
	 * for none: a client reconnecting with it would otherwise open and lose its stream in a loop.
	 */
	@Test
	void aStreamOpenedWithCredentialsPastTheirExpiryStaysOpenAMinuteNotNone() {
		Instant now = Instant.parse("2026-12-06T22:00:00Z");
		assertThat(Access.openFor(now.plusSeconds(90), now)).isEqualTo(Duration.ofSeconds(90));
		assertThat(Access.openFor(now, now)).isEqualTo(Duration.ofMinutes(1));
		assertThat(Access.openFor(now.minusSeconds(30), now)).isEqualTo(Duration.ofMinutes(1));
		assertThat(Access.openFor(null, now)).isNull();
	}

}
