package dev.a2.web;

import java.net.URI;

import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

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
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.server.WebFilter;

import static dev.a2.web.A2RoutesIntegrationTests.assertNothingStored;
import static dev.a2.web.A2RoutesIntegrationTests.error;
import static dev.a2.web.A2RoutesIntegrationTests.events;
import static dev.a2.web.A2RoutesIntegrationTests.history;
import static dev.a2.web.A2RoutesIntegrationTests.indexes;
import static dev.a2.web.A2RoutesIntegrationTests.message;
import static dev.a2.web.A2RoutesIntegrationTests.ok;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's {@link A2Authorizer} decides every route and socket frame (§12): a refusal
 * answers 401 to an anonymous caller and 403 to a known one, and changes nothing.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
@Import(AuthorizationIntegrationTests.Users.class)
@ActiveProfiles(AuthorizationIntegrationTests.PROFILE)
class AuthorizationIntegrationTests {

	/** Keeps {@link Users} out of the other tests' applications, which scan this package. */
	static final String PROFILE = "authorization-tests";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("authorization", registry::add);
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
	void anAnonymousPushIsUnauthorizedAndStoresNothing() {
		String message = error(push(null, "anon-push"), 401, "UNAUTHORIZED");
		assertThat(message).contains("push");
		assertNothingStored(this.http, "anon-push");
	}

	@Test
	void aKnownCallerThatMayPushPushesAndAnyoneReads() {
		JsonNode pushed = ok(push("ann", "ann-push"));
		assertThat(indexes(pushed)).containsExactly(1L);
		assertThat(indexes(history(this.http, "ann-push", ""))).containsExactly(1L);
		JsonNode state = ok(this.http.get().uri("/a2/chat/sessions/ann-push/state/summary").exchange());
		assertThat(state.get("index").asLong()).isEqualTo(1);
	}

	@Test
	void aKnownCallerThatMayNotPushIsForbiddenAndStoresNothing() {
		String message = error(push("bob", "bob-push"), 403, "FORBIDDEN");
		assertThat(message).contains("bob");
		assertNothingStored(this.http, "bob-push");
	}

	@Test
	void clearIsRefusedToEveryoneAndChangesNothing() {
		ok(push("ann", "no-clear"));
		error(this.http.delete().uri("/a2/chat/sessions/no-clear").exchange(), 401, "UNAUTHORIZED");
		error(this.http.delete().uri("/a2/chat/sessions/no-clear?ifLastIndex=1").exchange(), 401, "UNAUTHORIZED");
		error(this.http.delete().uri("/a2/chat/sessions/no-clear").header("X-User", "ann").exchange(), 403, "FORBIDDEN");
		JsonNode page = history(this.http, "no-clear", "");
		assertThat(indexes(page)).containsExactly(1L);
		assertThat(page.get("head").asLong()).isEqualTo(1);
	}

	@Test
	void aSocketPushIsAskedOfTheAuthorizerWithTheHandshakesCaller() {
		try (TestSocket anonymous = socket(null)) {
			anonymous.send("{\"type\":\"subscribe\",\"session\":\"socket-auth\"}");
			anonymous.awaitFrame(TestSocket.type("subscribed", "socket-auth"));
			anonymous.send("{\"type\":\"push\",\"ref\":\"a-1\",\"session\":\"socket-auth\",\"events\":["
					+ message("sa-1", "hi") + "]}");
			JsonNode refused = anonymous.awaitFrame(TestSocket.type("error"));
			assertThat(refused.get("ref").asString()).isEqualTo("a-1");
			assertThat(refused.get("error").get("code").asString()).isEqualTo("UNAUTHORIZED");
			anonymous.send("{\"type\":\"ping\"}");
			anonymous.awaitFrame(TestSocket.type("pong"));
		}
		try (TestSocket bob = socket("bob")) {
			bob.send("{\"type\":\"push\",\"ref\":\"b-1\",\"session\":\"socket-auth\",\"events\":[" + message("sb-1", "hi")
					+ "]}");
			JsonNode refused = bob.awaitFrame(TestSocket.type("error"));
			assertThat(refused.get("ref").asString()).isEqualTo("b-1");
			assertThat(refused.get("error").get("code").asString()).isEqualTo("FORBIDDEN");
		}
		assertNothingStored(this.http, "socket-auth");
		try (TestSocket ann = socket("ann")) {
			ann.send("{\"type\":\"push\",\"ref\":\"n-1\",\"session\":\"socket-auth\",\"events\":[" + message("sn-1", "hi")
					+ "]}");
			JsonNode ack = ann.awaitFrame(TestSocket.type("ack"));
			assertThat(ack.get("ref").asString()).isEqualTo("n-1");
			assertThat(ack.get("events").get(0).get("index").asLong()).isEqualTo(1);
		}
		assertThat(A2RoutesIntegrationTests.ids(history(this.http, "socket-auth", ""))).containsExactly("sn-1");
	}

	private WebTestClient.ResponseSpec push(String user, String session) {
		return this.http.post()
			.uri("/a2/chat/sessions/{session}/events", session)
			.contentType(MediaType.APPLICATION_JSON)
			.headers((headers) -> {
				if (user != null) {
					headers.set("X-User", user);
				}
			})
			.bodyValue(events(message(session + "-1", "hi")))
			.exchange();
	}

	private TestSocket socket(String user) {
		HttpHeaders headers = new HttpHeaders();
		if (user != null) {
			headers.set("X-User", user);
		}
		return new TestSocket(URI.create("ws://localhost:" + this.port + "/a2/chat/socket"), headers);
	}

	/** Callers named by an {@code X-User} header; who may do what. */
	@TestConfiguration(proxyBeanMethods = false)
	@Profile(PROFILE)
	static class Users {

		@Bean
		A2Authorizer authorizer() {
			return (caller, permission, contract, session) -> switch (permission) {
				case READ -> true;
				case PUSH -> caller != null && !"bob".equals(caller.getName());
				case PRESENCE -> caller != null;
				case CLEAR, OPERATE -> false;
			};
		}

		@Bean
		WebFilter users() {
			return WebCalls.callerFromHeader();
		}

	}

}
