package dev.a2.web;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;

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
	void permitAllLetsEveryoneIn() {
		assertThat(A2Authorizer.permitAll().allows(null, A2Permission.CLEAR, "chat", "s")).isTrue();
	}

}
