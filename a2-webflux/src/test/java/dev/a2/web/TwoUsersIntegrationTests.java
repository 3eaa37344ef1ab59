package dev.a2.web;

import java.net.URI;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import dev.a2.A2Server;
import dev.a2.Contract;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.Reducer;
import dev.a2.test.TestPostgres;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
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
import org.springframework.http.ResponseCookie;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.csrf.CookieServerCsrfTokenRepository;
import org.springframework.security.web.server.csrf.CsrfToken;
import org.springframework.security.web.server.csrf.ServerCsrfTokenRequestAttributeHandler;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.server.WebFilter;

import static dev.a2.web.A2RoutesIntegrationTests.error;
import static dev.a2.web.A2RoutesIntegrationTests.ok;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A support chat with two users on Spring Security, configured as docs/security.md says: each user
 * reaches only their own sessions ({@code user-<name>-…}) and the shared ones ({@code shared-…}), pushes
 * messages only under their own name, writes presence only as themselves, and never pushes the
 * assistant's server-only types. Every refusal changes nothing in the store, and no error tells a
 * stranger which contracts or reducers exist.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
@Import(TwoUsersIntegrationTests.Support.class)
@ActiveProfiles(TwoUsersIntegrationTests.PROFILE)
class TwoUsersIntegrationTests {

	/** Keeps {@link Support} out of the other tests' applications, which scan this package. */
	static final String PROFILE = "two-users-tests";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("twousers", registry::add);
	}

	@Autowired
	private WebTestClient client;

	@Autowired
	private A2Server a2;

	@LocalServerPort
	private int port;

	private WebTestClient http;

	@BeforeEach
	void patientClient() {
		this.http = A2RoutesIntegrationTests.patient(this.client);
	}

	// --- another user's session

	@Test
	void everyRouteOfAnotherUsersSessionIsForbiddenAndChangesNothing() {
		String session = "user-alice-routes";
		ok(push("alice", session, message("a-1", "my card number", "alice")));
		ok(putPresence("alice", session, "{\"values\":{\"typing\":true}}"));
		assertForbidden(as("bob", this.http.get().uri(path(session) + "/events")).exchange());
		assertForbidden(as("bob", this.http.get().uri(path(session) + "/state/count")).exchange());
		assertForbidden(as("bob", this.http.get().uri(path(session) + "/presence")).exchange());
		assertForbidden(as("bob", this.http.get().uri(path(session) + "/stream")).accept(MediaType.TEXT_EVENT_STREAM)
			.exchange());
		assertForbidden(push("bob", session, message("b-1", "hi", "bob")));
		assertForbidden(putPresence("bob", session, "{\"values\":{\"typing\":true}}"));
		assertForbidden(withCsrf("bob", this.http.delete().uri(path(session))).exchange());
		assertForbidden(withCsrf("bob", this.http.delete().uri(path(session) + "?ifLastIndex=1")).exchange());
		assertThat(ids(session)).containsExactly("a-1");
		assertThat(this.a2.session("support", session).presence().participants()).containsOnlyKeys("alice");
	}

	@Test
	void everyFrameOnAnotherUsersSessionIsForbiddenAndChangesNothing() {
		String session = "user-alice-socket";
		ok(push("alice", session, message("a-1", "mine", "alice")));
		try (TestSocket bob = socket("bob")) {
			bob.send("{\"type\":\"subscribe\",\"session\":\"" + session + "\"}");
			assertThat(code(bob.awaitFrame(errorAbout(session)))).isEqualTo("FORBIDDEN");
			bob.send("{\"type\":\"push\",\"ref\":\"p-1\",\"session\":\"" + session + "\",\"events\":["
					+ message("b-1", "hi", "bob") + "]}");
			assertThat(code(bob.awaitFrame(ref("p-1")))).isEqualTo("FORBIDDEN");
			bob.send("{\"type\":\"presence\",\"session\":\"" + session + "\",\"values\":{\"typing\":true}}");
			bob.awaitFrame((frame) -> bob.received.stream().filter(errorAbout(session)).count() == 3);
			bob.send("{\"type\":\"ping\"}");
			bob.awaitFrame(TestSocket.type("pong"));
			assertThat(bob.received.stream().filter(errorAbout(session)).map(TwoUsersIntegrationTests::code))
				.containsExactly("FORBIDDEN", "FORBIDDEN", "FORBIDDEN");
			assertThat(bob.received).noneMatch(TestSocket.type("subscribed")).noneMatch(TestSocket.type("events"));
		}
		assertThat(ids(session)).containsExactly("a-1");
		assertThat(this.a2.session("support", session).presence().participants()).isEmpty();
	}

	// --- what is written

	@Test
	void aServerOnlyTypeIsRefusedOverHttpAndTheSocketButTheServerWritesIt() {
		String session = "user-alice-answers";
		String answer = "{\"type\":\"answer.delta\",\"id\":\"fake\",\"payload\":{\"text\":\"trust me\"}}";
		String message = error(push("alice", session, answer), 403, "FORBIDDEN");
		assertThat(message).contains("answer.delta");
		// one server-only event in a batch refuses the whole batch
		error(push("alice", session, message("a-1", "hi", "alice") + "," + answer), 403, "FORBIDDEN");
		try (TestSocket alice = socket("alice")) {
			alice.send("{\"type\":\"push\",\"ref\":\"s-1\",\"session\":\"" + session + "\",\"events\":[" + answer + "]}");
			assertThat(code(alice.awaitFrame(ref("s-1")))).isEqualTo("FORBIDDEN");
		}
		assertThat(ids(session)).isEmpty();
		// the consumers' and the application's own appends are not the clients'
		this.a2.session("support", session).append(NewEvent.of("answer.delta", new AnswerDelta("hello"), "server-1"));
		assertThat(ids(session)).containsExactly("server-1");
	}

	@Test
	void presenceIsWrittenOnlyAsTheCaller() {
		String session = "shared-presence";
		String message = error(putPresence("bob", session, "{\"participant\":\"assistant\",\"values\":{\"typing\":true}}"),
				403, "FORBIDDEN");
		assertThat(message).contains("bob").contains("assistant");
		error(push("bob", session, message("b-1", "hi", "bob"),
				"{\"participant\":\"alice\",\"values\":{\"typing\":false}}"), 403, "FORBIDDEN");
		try (TestSocket bob = socket("bob")) {
			bob.send("{\"type\":\"presence\",\"session\":\"" + session
					+ "\",\"participant\":\"alice\",\"values\":{\"typing\":true}}");
			assertThat(code(bob.awaitFrame(errorAbout(session)))).isEqualTo("FORBIDDEN");
			bob.send("{\"type\":\"push\",\"ref\":\"p-1\",\"session\":\"" + session + "\",\"events\":["
					+ message("b-2", "hi", "bob") + "],\"presence\":{\"participant\":\"alice\",\"values\":{\"typing\":true}}}");
			assertThat(code(bob.awaitFrame(ref("p-1")))).isEqualTo("FORBIDDEN");
		}
		assertThat(ids(session)).isEmpty();
		assertThat(this.a2.session("support", session).presence().participants()).isEmpty();
		// as himself, named or not
		ok(putPresence("bob", session, "{\"participant\":\"bob\",\"values\":{\"typing\":true}}"));
		ok(putPresence("bob", session, "{\"values\":{\"typing\":false}}"));
		assertThat(this.a2.session("support", session).presence().participants()).containsOnlyKeys("bob");
	}

	@Test
	void theAuthorizerSeesTheEventsOfAPush() {
		String session = "shared-authors";
		String message = error(push("bob", session, message("b-1", "I am alice", "alice")), 403, "FORBIDDEN");
		assertThat(message).contains("bob");
		assertThat(ids(session)).isEmpty();
		ok(push("bob", session, message("b-2", "I am bob", "bob")));
		assertThat(ids(session)).containsExactly("b-2");
	}

	// --- nothing told before authorization

	@Test
	void noContractOrReducerIsNamedBeforeAuthorization() {
		ok(push("alice", "user-alice-names", message("a-1", "hi", "alice")));
		String contract = error(as("bob", this.http.get().uri("/a2/nope/sessions/user-alice-names/events")).exchange(),
				403, "FORBIDDEN");
		String reducer = error(as("bob", this.http.get().uri(path("user-alice-names") + "/state/nope")).exchange(), 403,
				"FORBIDDEN");
		String stream = error(as("bob", this.http.get().uri(path("user-alice-names") + "/stream?state=nope"))
			.accept(MediaType.TEXT_EVENT_STREAM).exchange(), 403, "FORBIDDEN");
		String push = error(withCsrf("bob", this.http.post().uri("/a2/nope/sessions/user-alice-names/events"))
			.contentType(MediaType.APPLICATION_JSON).bodyValue(events(message("b-1", "hi", "bob"))).exchange(), 403,
				"FORBIDDEN");
		try (TestSocket bob = new TestSocket(URI.create("ws://localhost:" + this.port + "/a2/nope/socket"), basic("bob"))) {
			bob.send("{\"type\":\"subscribe\",\"session\":\"user-alice-names\"}");
			assertThat(code(bob.awaitFrame(errorAbout("user-alice-names")))).isEqualTo("FORBIDDEN");
		}
		// a caller let in learns that what it asked for does not exist, and nothing else
		String unknownContract = error(as("alice", this.http.get().uri("/a2/nope/sessions/user-alice-names/events"))
			.exchange(), 404, "UNKNOWN_CONTRACT");
		String unknownReducer = error(as("alice", this.http.get().uri(path("user-alice-names") + "/state/nope")).exchange(),
				404, "UNKNOWN_REDUCER");
		for (String said : List.of(contract, reducer, stream, push, unknownContract, unknownReducer)) {
			assertThat(said).doesNotContain("chat").doesNotContain("count").doesNotContain("summary");
		}
		assertThat(unknownContract).contains("nope");
		assertThat(unknownReducer).contains("nope");
	}

	// --- CSRF

	@Test
	void aBrowserPushNeedsTheCsrfTokenOfItsCookie() {
		String session = "user-alice-csrf";
		EntityExchangeResult<byte[]> refused = as("alice", this.http.post().uri(path(session) + "/events"))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(events(message("a-1", "hi", "alice")))
			.exchange()
			.expectStatus().isForbidden()
			.expectBody().returnResult();
		// Spring Security's refusal, before A2 sees the request: not A2's error
		assertThat(new String(refused.getResponseBodyContent())).doesNotContain("\"error\"");
		assertThat(ids(session)).isEmpty();
		ok(push("alice", session, message("a-2", "hi", "alice")));
		assertThat(ids(session)).containsExactly("a-2");
	}

	// --- the socket behind Spring Security

	@Test
	void aFrameSentTheMomentTheSocketOpensIsAnswered() {
		// Spring Security checks the password off the event loop, so the upgrade after it starts there too;
		// a browser sends its subscribe as soon as the socket opens. Reactor Netty could drop that first
		// frame (about one socket in thirty here): many sockets, each sending at once
		for (int round = 0; round < 10; round++) {
			List<TestSocket> sockets = new ArrayList<>();
			try {
				for (int socket = 0; socket < 20; socket++) {
					TestSocket alice = socket("alice");
					sockets.add(alice);
					alice.send("{\"type\":\"ping\"}");
				}
				for (TestSocket alice : sockets) {
					alice.awaitFrame(TestSocket.type("pong"));
				}
			}
			finally {
				sockets.forEach(TestSocket::close);
			}
		}
	}

	// --- helpers

	private WebTestClient.ResponseSpec push(String user, String session, String event) {
		return push(user, session, event, null);
	}

	private WebTestClient.ResponseSpec push(String user, String session, String events, @Nullable String presence) {
		String body = "{\"events\":[" + events + "]" + ((presence != null) ? ",\"presence\":" + presence : "") + "}";
		return withCsrf(user, this.http.post().uri(path(session) + "/events")).contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange();
	}

	private WebTestClient.ResponseSpec putPresence(String user, String session, String write) {
		return withCsrf(user, this.http.put().uri(path(session) + "/presence")).contentType(MediaType.APPLICATION_JSON)
			.bodyValue(write)
			.exchange();
	}

	/** A request as a browser page of the user sends it: its basic credentials, the token of its CSRF cookie. */
	private <S extends WebTestClient.RequestHeadersSpec<?>> S withCsrf(String user, S request) {
		String token = csrfToken(user);
		as(user, request);
		request.cookie("XSRF-TOKEN", token).header("X-XSRF-TOKEN", token);
		return request;
	}

	/** The token of the cookie any page of the application sets (here, a history read of the user's own). */
	private String csrfToken(String user) {
		EntityExchangeResult<byte[]> page = as(user, this.http.get().uri(path("user-" + user + "-page") + "/events"))
			.exchange()
			.expectStatus().isOk()
			.expectBody().returnResult();
		ResponseCookie cookie = page.getResponseCookies().getFirst("XSRF-TOKEN");
		assertThat(cookie).as("the XSRF-TOKEN cookie").isNotNull();
		assertThat(cookie.isHttpOnly()).as("readable by the page's script").isFalse();
		return cookie.getValue();
	}

	private static <S extends WebTestClient.RequestHeadersSpec<?>> S as(String user, S request) {
		request.headers((headers) -> headers.setBasicAuth(user, user + "-password"));
		return request;
	}

	private static HttpHeaders basic(String user) {
		HttpHeaders headers = new HttpHeaders();
		headers.setBasicAuth(user, user + "-password");
		return headers;
	}

	private TestSocket socket(String user) {
		return new TestSocket(URI.create("ws://localhost:" + this.port + "/a2/support/socket"), basic(user));
	}

	private static String path(String session) {
		return "/a2/support/sessions/" + session;
	}

	private static String message(String id, String text, String author) {
		return "{\"type\":\"message.sent\",\"id\":\"" + id + "\",\"payload\":{\"text\":\"" + text + "\",\"author\":\""
				+ author + "\"}}";
	}

	private static String events(String events) {
		return "{\"events\":[" + events + "]}";
	}

	private static void assertForbidden(WebTestClient.ResponseSpec response) {
		error(response, 403, "FORBIDDEN");
	}

	private List<String> ids(String session) {
		return this.a2.session("support", session).history(0, 1000).events().stream().map(Event::id).toList();
	}

	private static String code(JsonNode errorFrame) {
		return errorFrame.get("error").get("code").asString();
	}

	private static Predicate<JsonNode> ref(String ref) {
		return (frame) -> "error".equals(frame.path("type").asString()) && ref.equals(frame.path("ref").asString());
	}

	private static Predicate<JsonNode> errorAbout(String session) {
		return TestSocket.type("error", session);
	}

	record MessageSent(String text, String author) {
	}

	record AnswerDelta(String text) {
	}

	/**
	 * The support application's security, as docs/security.md shows it: two users, every route behind a
	 * login, CSRF tokens in a cookie the page's script reads, and an authorizer of its own.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	@Profile(PROFILE)
	@EnableWebFluxSecurity
	static class Support {

		@Bean
		Contract support() {
			return Contract.builder("support")
				.event("message.sent", MessageSent.class)
				.event("answer.delta", AnswerDelta.class)
				.serverOnly("answer.delta")
				.presence("typing", Boolean.class)
				.reducer("count", Reducer.of(Integer.class, 0, (count, event) -> count + 1))
				.build();
		}

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("alice").password("{noop}alice-password").roles("USER").build(),
					User.withUsername("bob").password("{noop}bob-password").roles("USER").build());
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

		/** Sets the CSRF cookie on every response, so a page has the token before its first push. */
		@Bean
		WebFilter csrfCookie() {
			return (exchange, chain) -> {
				Mono<CsrfToken> token = exchange.getAttribute(CsrfToken.class.getName());
				return (token != null ? token.then() : Mono.<Void>empty()).then(chain.filter(exchange));
			};
		}

		@Bean
		A2Authorizer authorizer() {
			return new OwnSessions();
		}

	}

	/**
	 * Each user reaches their own sessions and the shared ones, pushes messages under their own name only,
	 * and operates nothing.
	 */
	static final class OwnSessions implements A2Authorizer {

		@Override
		public boolean allows(@Nullable Principal caller, A2Permission permission, String contract, String session) {
			return caller != null && permission != A2Permission.OPERATE
					&& (session.startsWith("user-" + caller.getName() + "-") || session.startsWith("shared-"));
		}

		@Override
		public boolean allows(@Nullable Principal caller, A2Access access) {
			if (!A2Authorizer.super.allows(caller, access)) {
				return false;
			}
			for (NewEvent event : access.events()) {
				if (event.payload() instanceof JsonNode payload && payload.has("author")
						&& !payload.get("author").asString().equals(caller.getName())) {
					return false;
				}
			}
			return true;
		}

	}

}
