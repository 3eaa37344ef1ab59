package dev.a2.web;

import java.net.URI;
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.a2.test.TestPostgres;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Profile;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import org.springframework.web.server.WebFilter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A caller the authorizer stops letting read a session (removed from a room, an account disabled)
 * stops receiving it on the stream or socket subscription it opened before: every new request of
 * his was refused, but the open connection went on delivering the session's events and presence for
 * as long as it held. Open streams ask the authorizer again every {@code a2.web.reauthorize-every}.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		// presence that outlives every test: what removes a reader's presence here is his removal, not its expiry
		properties = { "a2.web.reauthorize-every=200ms", "a2.presence.ttl=1h" })
@Import(RevokedReadersIntegrationTests.Members.class)
@ActiveProfiles(RevokedReadersIntegrationTests.PROFILE)
@ExtendWith(OutputCaptureExtension.class)
class RevokedReadersIntegrationTests {

	/** Keeps {@link Members} out of the other tests' applications, which scan this package. */
	static final String PROFILE = "revoked-readers-tests";

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {
	};

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("revoked", registry::add);
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Members members;

	@AfterEach
	void everyoneBack() {
		this.members.removed.clear();
		this.members.failing.clear();
	}

	@Test
	void aStreamEndsOnceItsReaderMayNoLongerReadAndItsReconnectIsRefused() {
		String session = "room-stream";
		WebClient http = WebClient.create("http://localhost:" + this.port);
		List<ServerSentEvent<String>> alice = new CopyOnWriteArrayList<>();
		List<ServerSentEvent<String>> bob = new CopyOnWriteArrayList<>();
		Disposable aliceStream = stream(http, session, "alice").subscribe(alice::add);
		Disposable bobStream = streamMarkingItsEnd(http, session, "bob", bob);
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> presence(alice) && presence(bob));
			push(http, session, "alice", "before");
			await().atMost(Duration.ofSeconds(20)).until(() -> said(bob, "before"));

			this.members.removed.add("bob/" + session);
			await().atMost(Duration.ofSeconds(20)).until(() -> ended(bob));
			assertThat(bob.get(bob.size() - 2).comment()).contains("may no longer read this session");

			// the reader who may still read reads on
			push(http, session, "alice", "after");
			await().atMost(Duration.ofSeconds(20)).until(() -> said(alice, "after"));
			assertThat(alice).noneMatch((frame) -> frame.comment() != null && frame.comment().contains("may no longer"));

			// the removed reader's reconnect is refused: he sees no more of the session
			assertThatThrownBy(() -> stream(http, session, "bob").blockFirst(Duration.ofSeconds(20)))
				.isInstanceOfSatisfying(WebClientResponseException.class,
						(refused) -> assertThat(refused.getStatusCode()).isEqualTo(HttpStatus.FORBIDDEN));
		}
		finally {
			aliceStream.dispose();
			bobStream.dispose();
		}
	}

	@Test
	void aSocketSubscriptionEndsWithForbiddenAndTheSocketsOtherSessionsGoOn() {
		String room = "room-socket";
		String other = "room-socket-other";
		WebClient http = WebClient.create("http://localhost:" + this.port);
		try (TestSocket alice = socket("alice"); TestSocket bob = socket("bob")) {
			alice.send("{\"type\":\"subscribe\",\"session\":\"" + room + "\"}");
			bob.send("{\"type\":\"subscribe\",\"session\":\"" + room + "\"}");
			bob.send("{\"type\":\"subscribe\",\"session\":\"" + other + "\"}");
			alice.awaitFrame(TestSocket.type("subscribed", room));
			bob.awaitFrame(TestSocket.type("subscribed", room));
			bob.awaitFrame(TestSocket.type("subscribed", other));

			this.members.removed.add("bob/" + room);
			JsonNode ended = bob.awaitFrame(TestSocket.type("error", room));
			assertThat(ended.get("error").get("code").asString()).isEqualTo("FORBIDDEN");
			assertThat(ended.get("error").get("message").asString()).contains("'bob' may not read");
			assertThat(ended.get("unsubscribed").asBoolean()).isTrue();
			assertThat(ended.has("ref")).isFalse();

			// the subscription is gone: subscribing again is refused, not "already follows"
			bob.send("{\"type\":\"subscribe\",\"ref\":\"again\",\"session\":\"" + room + "\"}");
			JsonNode again = bob.awaitFrame((frame) -> "again".equals(frame.path("ref").asString()));
			assertThat(again.get("error").get("code").asString()).isEqualTo("FORBIDDEN");

			// the socket, its other session and the other reader's subscription go on
			push(http, room, "alice", "still here");
			push(http, other, "alice", "elsewhere");
			alice.awaitFrame((frame) -> TestSocket.type("events", room).test(frame) && frame.toString().contains("still here"));
			bob.awaitFrame((frame) -> TestSocket.type("events", other).test(frame) && frame.toString().contains("elsewhere"));
			assertThat(alice.received).noneMatch(TestSocket.type("error"));
			assertThat(bob.closeStatus.get()).isNull();
		}
	}

	/**
	 * A reader removed from a session leaves its presence there when his stream ends, as a client that
	 * closes its view does: his client stops keeping it alive, and the others saw him as present until
	 * it expired.
	 */
	@Test
	void aReaderWhoseStreamEndsLeavesThePresenceForTheOthersToSee() {
		String session = "room-stream-presence";
		WebClient http = WebClient.create("http://localhost:" + this.port);
		List<ServerSentEvent<String>> alice = new CopyOnWriteArrayList<>();
		List<ServerSentEvent<String>> bob = new CopyOnWriteArrayList<>();
		Disposable aliceStream = stream(http, session, "alice").subscribe(alice::add);
		Disposable bobStream = streamMarkingItsEnd(http, session, "bob", bob);
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> presence(alice) && presence(bob));
			writePresence(http, session, "bob", "{\"values\":{\"typing\":true,\"status\":\"reading\"}}");
			writePresence(http, session, "alice", "{\"values\":{\"status\":\"reading\"}}");
			await().atMost(Duration.ofSeconds(20)).until(() -> patched(alice, "bob", "typing", true));

			this.members.removed.add("bob/" + session);
			await().atMost(Duration.ofSeconds(20)).until(() -> ended(bob));
			await().atMost(Duration.ofSeconds(20))
				.until(() -> patched(alice, "bob", "typing", null) && patched(alice, "bob", "status", null));
			JsonNode now = json.readTree(http.get().uri("/a2/chat/sessions/{session}/presence", session).header("X-User", "alice")
				.retrieve().bodyToMono(String.class).block(Duration.ofSeconds(20)));
			assertThat(now.get("participants").propertyNames()).containsExactly("alice");
		}
		finally {
			aliceStream.dispose();
			bobStream.dispose();
		}
	}

	/** The same for a socket subscription, whose socket stays open with its caller's other sessions. */
	@Test
	void aReaderWhoseSubscriptionEndsLeavesThePresenceForTheOthersToSee() {
		String room = "room-socket-presence";
		try (TestSocket alice = socket("alice"); TestSocket bob = socket("bob")) {
			alice.send("{\"type\":\"subscribe\",\"session\":\"" + room + "\"}");
			bob.send("{\"type\":\"subscribe\",\"session\":\"" + room + "\"}");
			alice.awaitFrame(TestSocket.type("subscribed", room));
			bob.awaitFrame(TestSocket.type("subscribed", room));
			bob.send("{\"type\":\"presence\",\"session\":\"" + room + "\",\"values\":{\"typing\":true}}");
			alice.awaitFrame((frame) -> TestSocket.type("presence", room).test(frame) && patch(frame, "bob", "typing", true));

			this.members.removed.add("bob/" + room);
			bob.awaitFrame(TestSocket.type("error", room));
			alice.awaitFrame((frame) -> TestSocket.type("presence", room).test(frame) && patch(frame, "bob", "typing", null));
		}
	}

	@Test
	void anAuthorizerThatFailsWhileAskedAgainLeavesTheStreamOpenAndSaysSo(CapturedOutput output) {
		String session = "room-failing";
		WebClient http = WebClient.create("http://localhost:" + this.port);
		List<ServerSentEvent<String>> bob = new CopyOnWriteArrayList<>();
		Disposable bobStream = streamMarkingItsEnd(http, session, "bob", bob);
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> presence(bob));
			int before = this.members.failures.get();
			this.members.failing.add("bob/" + session);
			await().atMost(Duration.ofSeconds(20)).until(() -> this.members.failures.get() >= before + 3);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> output.getOut().contains("A2Authorizer failed while asked again whether 'bob' may still read session '"
						+ session + "'"));
			this.members.failing.clear();

			push(http, session, "alice", "still open");
			await().atMost(Duration.ofSeconds(20)).until(() -> said(bob, "still open"));
			assertThat(ended(bob)).isFalse();
		}
		finally {
			bobStream.dispose();
		}
	}

	/** Whether a presence frame of the stream patched the participant's field to the value ({@code null}: removed). */
	private static boolean patched(List<ServerSentEvent<String>> frames, String participant, String field,
			@Nullable Object value) {
		return frames.stream()
			.anyMatch((frame) -> "presence".equals(frame.event()) && patch(json.readTree(frame.data()), participant, field, value));
	}

	/** Whether a presence frame ({@code {"patches":[…]}}) patches the participant's field to the value. */
	private static boolean patch(JsonNode frame, String participant, String field, @Nullable Object value) {
		for (JsonNode patch : frame.path("patches")) {
			if (participant.equals(patch.path("participant").asString()) && field.equals(patch.path("field").asString())
					&& ((value == null) ? patch.get("value").isNull() : value.toString().equals(patch.get("value").asString()))) {
				return true;
			}
		}
		return false;
	}

	private static void writePresence(WebClient http, String session, String user, String write) {
		http.put()
			.uri("/a2/chat/sessions/{session}/presence", session)
			.header("X-User", user)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(write)
			.retrieve()
			.toBodilessEntity()
			.block(Duration.ofSeconds(20));
	}

	private static boolean presence(List<ServerSentEvent<String>> frames) {
		return frames.stream().anyMatch((frame) -> "presence".equals(frame.event()));
	}

	private static boolean said(List<ServerSentEvent<String>> frames, String text) {
		return frames.stream().anyMatch((frame) -> "events".equals(frame.event()) && frame.data().contains(text));
	}

	private static boolean ended(List<ServerSentEvent<String>> frames) {
		return frames.stream().anyMatch((frame) -> "ended".equals(frame.event()));
	}

	/** The caller's stream into {@code into}, and an {@code ended} event there when the server ends it. */
	private static Disposable streamMarkingItsEnd(WebClient http, String session, String user,
			List<ServerSentEvent<String>> into) {
		return stream(http, session, user).doOnNext(into::add)
			.then(Mono.fromRunnable(() -> into.add(ServerSentEvent.<String>builder().event("ended").build())))
			.subscribe();
	}

	private static Flux<ServerSentEvent<String>> stream(WebClient http, String session, String user) {
		return http.get()
			.uri("/a2/chat/sessions/{session}/stream", session)
			.header("X-User", user)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.retrieve()
			.bodyToFlux(SSE);
	}

	private static void push(WebClient http, String session, String user, String text) {
		http.post()
			.uri("/a2/chat/sessions/{session}/events", session)
			.header("X-User", user)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"" + text + "\",\"author\":\"" + user
					+ "\"}}]}")
			.retrieve()
			.toBodilessEntity()
			.block(Duration.ofSeconds(20));
	}

	private TestSocket socket(String user) {
		HttpHeaders headers = new HttpHeaders();
		headers.set("X-User", user);
		return new TestSocket(URI.create("ws://localhost:" + this.port + "/a2/chat/socket"), headers);
	}

	/**
	 * Callers named by an {@code X-User} header; every one reads and writes every session but those he
	 * was removed from ({@code "user/session"}). A test removes and fails callers as it goes.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	@Profile(PROFILE)
	static class Members implements A2Authorizer {

		final Set<String> removed = ConcurrentHashMap.newKeySet();

		/** Callers whose question the authorizer fails to answer, as when its database is down. */
		final Set<String> failing = ConcurrentHashMap.newKeySet();

		final AtomicInteger failures = new AtomicInteger();

		@Override
		public boolean allows(@Nullable Principal caller, A2Permission permission, String contract, String session) {
			if (caller == null || permission == A2Permission.OPERATE) {
				return false;
			}
			String member = caller.getName() + "/" + session;
			if (this.failing.contains(member)) {
				this.failures.incrementAndGet();
				throw new IllegalStateException("the membership database does not answer");
			}
			return !this.removed.contains(member);
		}

		@Bean
		WebFilter users() {
			return WebCalls.callerFromHeader();
		}

	}

}
