package dev.a2.web;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The WebSocket protocol of §10 on a real server, with a real WebSocket client. */
class SocketIntegrationTests {

	private static Instances instances;

	private static int port;

	private static WebClient http;

	/** An instance mounted under a WebFlux base path, {@code /app}: A2's URLs are {@code /app/a2/…}. */
	private static int portUnderBasePath;

	@BeforeAll
	static void start() {
		instances = new Instances("sockets");
		ConfigurableApplicationContext app = instances.start(ChatApplication.class, "a2.web.ping=300ms",
				"a2.web.max-subscriptions-per-socket=3");
		port = Instances.port(app);
		http = WebCalls.client(app);
		portUnderBasePath = Instances.port(instances.start(ChatApplication.class, "spring.webflux.base-path=/app"));
	}

	@AfterAll
	static void stop() {
		instances.close();
	}

	@Test
	void oneSocketFollowsManySessionsAndPushesWithAcks() {
		WebCalls.push(http, "room-b", "before");
		try (TestSocket socket = new TestSocket(port, "chat")) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"room-a\"}");
			socket.send("{\"type\":\"subscribe\",\"session\":\"room-b\",\"after\":0}");
			assertThat(socket.awaitFrame(TestSocket.type("subscribed", "room-a")).get("head").asLong()).isZero();
			assertThat(socket.awaitFrame(TestSocket.type("subscribed", "room-b")).get("head").asLong()).isEqualTo(1);
			assertThat(indexes(socket.awaitFrame(TestSocket.type("events", "room-b")))).containsExactly(1L);

			socket.send("{\"type\":\"push\",\"ref\":\"r1\",\"session\":\"room-a\",\"events\":[{\"type\":\"message.sent\","
					+ "\"payload\":{\"text\":\"hi\",\"author\":\"ann\"},\"id\":\"m-1\"},{\"type\":\"message.sent\","
					+ "\"payload\":{\"text\":\"again\",\"author\":\"ann\"}}]}");
			JsonNode ack = socket.awaitFrame(TestSocket.type("ack"));
			assertThat(ack.get("ref").asString()).isEqualTo("r1");
			assertThat(ack.get("events").get(0).get("index").asLong()).isEqualTo(1);
			assertThat(ack.get("events").get(0).get("id").asString()).isEqualTo("m-1");
			assertThat(ack.get("events").get(1).get("index").asLong()).isEqualTo(2);
			JsonNode events = socket.awaitFrame(TestSocket.type("events", "room-a"));
			assertThat(indexes(events)).containsExactly(1L, 2L);
			assertThat(events.get("events").get(0).get("payload").get("text").asString()).isEqualTo("hi");

			WebCalls.push(http, "room-b", "over http");
			socket.awaitFrame((frame) -> TestSocket.type("events", "room-b").test(frame) && indexes(frame).contains(2L));

			socket.send("{\"type\":\"ping\"}");
			socket.awaitFrame(TestSocket.type("pong"));
		}
	}

	@Test
	void aBadPushAnswersAnErrorWithItsRefAndStoresNothing() {
		try (TestSocket socket = new TestSocket(port, "chat")) {
			socket.send("{\"type\":\"push\",\"ref\":7,\"session\":\"bad-push\",\"events\":[{\"type\":\"message.sent\","
					+ "\"payload\":{\"text\":\"\",\"author\":\"ann\"}}]}");
			JsonNode error = socket.awaitFrame(TestSocket.type("error"));
			assertThat(error.get("ref").isIntegralNumber()).as("the ref of %s, sent as the number 7", error).isTrue();
			assertThat(error.get("ref").asLong()).isEqualTo(7);
			assertThat(error.get("error").get("code").asString()).isEqualTo("INVALID_PAYLOAD");
			assertThat(error.get("error").get("message").asString()).contains("events[0].payload.text");
			socket.send("{\"type\":\"ping\"}");
			socket.awaitFrame(TestSocket.type("pong"));
		}
		String page = http.get().uri("/a2/chat/sessions/bad-push/events").retrieve().bodyToMono(String.class).block();
		assertThat(page).contains("\"events\":[]");
	}

	@Test
	void aFrameWithAMemberItDoesNotHaveIsRefusedNamingItAndChangesNothing() {
		try (TestSocket socket = new TestSocket(port, "chat")) {
			socket.send("{\"type\":\"push\",\"ref\":8,\"session\":\"misspelt-frame\",\"events\":[{\"type\":\"message.sent\","
					+ "\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}],\"presense\":{\"participant\":\"ann\","
					+ "\"values\":{\"typing\":false}}}");
			JsonNode push = socket.awaitFrame(TestSocket.type("error"));
			assertThat(push.get("ref").asLong()).isEqualTo(8);
			assertThat(push.get("error").get("message").asString())
				.isEqualTo("the push frame has no member 'presense'; its members are events, presence, ref, session, type");
			socket.send("{\"type\":\"presence\",\"ref\":9,\"session\":\"misspelt-frame\",\"participant\":\"ann\","
					+ "\"values\":{\"typing\":true},\"ttl\":5}");
			JsonNode presence = socket.awaitFrame((frame) -> TestSocket.type("error").test(frame) && frame.path("ref").asLong() == 9);
			assertThat(presence.get("error").get("message").asString()).isEqualTo("the presence frame has no member 'ttl'; "
					+ "its members are at, participant, ref, session, type, values");
			// a misspelt after would have followed the session from its first event
			socket.send("{\"type\":\"subscribe\",\"ref\":10,\"session\":\"misspelt-frame\",\"afer\":5}");
			JsonNode subscribe = socket.awaitFrame((frame) -> TestSocket.type("error").test(frame) && frame.path("ref").asLong() == 10);
			assertThat(subscribe.get("error").get("message").asString())
				.isEqualTo("the subscribe frame has no member 'afer'; its members are after, ref, session, type");
			// not followed: a subscribe as it should be is taken, not refused as a second one
			socket.send("{\"type\":\"subscribe\",\"ref\":13,\"session\":\"misspelt-frame\",\"after\":0}");
			socket.awaitFrame(TestSocket.type("subscribed", "misspelt-frame"));
			socket.send("{\"type\":\"unsubscribe\",\"ref\":11,\"session\":\"misspelt-frame\",\"after\":0}");
			JsonNode unsubscribe = socket.awaitFrame((frame) -> TestSocket.type("error").test(frame) && frame.path("ref").asLong() == 11);
			assertThat(unsubscribe.get("error").get("message").asString())
				.isEqualTo("the unsubscribe frame has no member 'after'; its members are ref, session, type");
			socket.send("{\"type\":\"ping\",\"ref\":12,\"at\":1}");
			JsonNode ping = socket.awaitFrame((frame) -> TestSocket.type("error").test(frame) && frame.path("ref").asLong() == 12);
			assertThat(ping.get("error").get("message").asString()).isEqualTo("the ping frame has no member 'at'; its members are ref, type");
			socket.send("{\"type\":\"ping\"}");
			socket.awaitFrame(TestSocket.type("pong"));
			assertThat(socket.received).noneMatch((frame) -> TestSocket.type("error").test(frame) && frame.path("ref").asLong() == 13);
		}
		assertThat(http.get().uri("/a2/chat/sessions/misspelt-frame/events").retrieve().bodyToMono(String.class).block())
			.contains("\"events\":[]");
		assertThat(http.get().uri("/a2/chat/sessions/misspelt-frame/presence").retrieve().bodyToMono(String.class).block())
			.isEqualTo("{\"participants\":{}}");
	}

	@Test
	void theAckOfAPushCarriesItsRefAsSentANumberAsANumber() {
		try (TestSocket socket = new TestSocket(port, "chat")) {
			socket.send("{\"type\":\"push\",\"ref\":42,\"session\":\"numeric-ref\",\"events\":[{\"type\":\"message.sent\","
					+ "\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}]}");
			JsonNode ack = socket.awaitFrame(TestSocket.type("ack"));
			assertThat(ack.get("ref").isIntegralNumber()).as("the ref of %s, sent as the number 42", ack).isTrue();
			assertThat(ack.get("ref").asLong()).isEqualTo(42);
			socket.send("{\"type\":\"push\",\"ref\":\"42\",\"session\":\"numeric-ref\",\"events\":[{\"type\":\"message.sent\","
					+ "\"payload\":{\"text\":\"again\",\"author\":\"ann\"}}]}");
			JsonNode second = socket.awaitFrame((frame) -> TestSocket.type("ack").test(frame) && frame.path("ref").isString());
			assertThat(second.get("ref").asString()).isEqualTo("42");
		}
	}

	@Test
	void theSocketServesItsContractUnderAWebFluxBasePath() {
		WebClient underBasePath = WebClient.create("http://localhost:" + portUnderBasePath);
		underBasePath.post().uri("/app/a2/chat/sessions/based/events").contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}]}")
			.retrieve().toBodilessEntity().block(Duration.ofSeconds(30));
		try (TestSocket socket = new TestSocket(URI.create("ws://localhost:" + portUnderBasePath + "/app/a2/chat/socket"),
				new HttpHeaders())) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"based\"}");
			JsonNode answer = socket.awaitFrame((frame) -> TestSocket.type("subscribed").test(frame) || TestSocket.type("error").test(frame));
			assertThat(answer.path("type").asString()).as("the answer to a subscribe: %s", answer).isEqualTo("subscribed");
			assertThat(answer.path("head").asLong()).isEqualTo(1);
			assertThat(indexes(socket.awaitFrame(TestSocket.type("events", "based")))).containsExactly(1L);
		}
		// the contract is the URL's segment before /socket, whatever the application is mounted under
		try (TestSocket socket = new TestSocket(URI.create("ws://localhost:" + portUnderBasePath + "/app/a2/nope/socket"),
				new HttpHeaders())) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"based\"}");
			JsonNode error = socket.awaitFrame(TestSocket.type("error"));
			assertThat(error.path("error").path("code").asString()).isEqualTo("UNKNOWN_CONTRACT");
			assertThat(error.path("error").path("message").asString()).contains("'nope'");
		}
	}

	/**
	 * A client that reads gets the answer to every frame however many it sends at once: the answers
	 * waited in a queue of 256 apart from what the client sent, and a burst filled it before the socket
	 * could send them, which closed the socket (1008, "does not read its answers") with its input unread.
	 */
	@Test
	void aClientThatReadsIsAnsweredEveryFrameOfABurst() {
		try (TestSocket socket = new TestSocket(port, "chat")) {
			for (int i = 0; i < 1000; i++) {
				socket.send("{\"type\":\"ping\"}");
			}
			for (int i = 0; i < 300; i++) {
				socket.send("{\"type\":\"subscribe\",\"session\":\"burst-" + i + "\"}");
			}
			await().atMost(Duration.ofSeconds(60)).until(() -> count(socket, "pong") == 1000 && count(socket, "error") == 297
					|| socket.closeStatus.get() != null);
			assertThat(socket.closeStatus.get()).as("how the server closed the socket").isNull();
			assertThat(count(socket, "subscribed")).as("this instance's most subscriptions per socket").isEqualTo(3);
			assertThat(socket.received.stream().filter(TestSocket.type("error")))
				.allSatisfy((error) -> assertThat(error.path("error").path("message").asString()).contains("follows 3 sessions already"));
			socket.send("{\"type\":\"ping\"}");
			await().atMost(Duration.ofSeconds(20)).until(() -> count(socket, "pong") == 1001);
		}
	}

	private static long count(TestSocket socket, String type) {
		return socket.received.stream().filter(TestSocket.type(type)).count();
	}

	@Test
	void pathsNoRouteTakesUnderAWebFluxBasePathAreNamedAsSent() {
		WebClient underBasePath = WebClient.create("http://localhost:" + portUnderBasePath);
		ResponseEntity<String> missing = underBasePath.get().uri("/app/a2/chat/nothing").exchangeToMono((r) -> r.toEntity(String.class))
			.block(Duration.ofSeconds(30));
		assertThat(missing.getStatusCode().value()).isEqualTo(404);
		assertThat(missing.getBody()).contains("\"NOT_FOUND\"").contains("A2 has no endpoint at /app/a2/chat/nothing:")
			.contains("/app/a2/{contract}/socket");
		ResponseEntity<String> wrongMethod = underBasePath.delete().uri("/app/a2/chat/sessions/based/events")
			.exchangeToMono((r) -> r.toEntity(String.class)).block(Duration.ofSeconds(30));
		assertThat(wrongMethod.getStatusCode().value()).isEqualTo(405);
		assertThat(wrongMethod.getBody()).contains("\"METHOD_NOT_ALLOWED\"")
			.contains("/app/a2/chat/sessions/based/events does not answer DELETE");
	}

	@Test
	void unsubscribeEndsTheSessionsFramesAndTheServerPingsAnIdleSocket() {
		try (TestSocket socket = new TestSocket(port, "chat")) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"leave-a\"}");
			socket.send("{\"type\":\"subscribe\",\"session\":\"leave-b\"}");
			socket.awaitFrame(TestSocket.type("subscribed", "leave-a"));
			socket.awaitFrame(TestSocket.type("subscribed", "leave-b"));
			socket.send("{\"type\":\"unsubscribe\",\"session\":\"leave-a\"}");
			socket.awaitFrame(TestSocket.type("unsubscribed", "leave-a"));
			int mark = socket.received.size();
			WebCalls.push(http, "leave-a", "unseen");
			WebCalls.push(http, "leave-b", "seen");
			socket.awaitFrame(TestSocket.type("events", "leave-b"));
			List<JsonNode> after = new ArrayList<>(socket.received.subList(mark, socket.received.size()));
			assertThat(after).noneMatch(TestSocket.type("events", "leave-a"));

			socket.awaitFrame(TestSocket.type("ping"));
		}
	}

	@Test
	void aSocketMayNotFollowOneSessionTwice() {
		try (TestSocket socket = new TestSocket(port, "chat")) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"twice\"}");
			socket.awaitFrame(TestSocket.type("subscribed", "twice"));
			socket.send("{\"type\":\"subscribe\",\"session\":\"twice\"}");
			JsonNode error = socket.awaitFrame(TestSocket.type("error"));
			assertThat(error.get("session").asString()).isEqualTo("twice");
			assertThat(error.get("error").get("message").asString()).contains("already follows");
		}
	}

	@Test
	void aSocketFollowsNoMoreSessionsThanItsLimit() {
		try (TestSocket socket = new TestSocket(port, "chat")) {
			for (int i = 1; i <= 3; i++) {
				socket.send("{\"type\":\"subscribe\",\"session\":\"limit-" + i + "\"}");
				socket.awaitFrame(TestSocket.type("subscribed", "limit-" + i));
			}
			socket.send("{\"type\":\"subscribe\",\"session\":\"limit-4\"}");
			JsonNode error = socket.awaitFrame(TestSocket.type("error"));
			assertThat(error.get("session").asString()).isEqualTo("limit-4");
			assertThat(error.get("error").get("message").asString()).contains("follows 3 sessions already");
			// one freed, one more may come
			socket.send("{\"type\":\"unsubscribe\",\"session\":\"limit-1\"}");
			socket.send("{\"type\":\"subscribe\",\"session\":\"limit-4\"}");
			socket.awaitFrame(TestSocket.type("subscribed", "limit-4"));
		}
	}

	/**
	 * A store read that fails for one session (PostgreSQL raises an error on its events and presence: a
	 * row security policy of the database, as a fault of one session's data would) is told to that
	 * session's subscription with an error frame; the socket stays open and its other subscriptions go on.
	 */
	@Test
	void aStoreFaultOfOneSessionIsAnErrorOfItsSubscriptionAndTheOthersGoOn() throws Exception {
		try (Instances faulty = new Instances("socket_fault")) {
			String schema = faulty.schema();
			ReadFaults.allowFaultyRole(schema);
			ConfigurableApplicationContext app = faulty.start(ChatApplication.class, ReadFaults.READ_AS_FAULTY_ROLE);
			WebClient client = WebCalls.client(app);
			WebCalls.push(client, "steady", "first");
			WebCalls.push(client, "broken", "stored before the fault");
			WebCalls.typing(client, "broken", "ann");
			ReadFaults.failReadsOf(schema, "broken", "");
			try (TestSocket socket = new TestSocket(Instances.port(app), "chat")) {
				socket.send("{\"type\":\"subscribe\",\"session\":\"steady\"}");
				assertThat(indexes(socket.awaitFrame(TestSocket.type("events", "steady")))).containsExactly(1L);
				socket.send("{\"type\":\"subscribe\",\"session\":\"broken\"}");
				JsonNode error = socket.awaitFrame(TestSocket.type("error", "broken"));
				assertThat(error.path("ref").isMissingNode()).as("%s answers no frame", error).isTrue();
				assertThat(error.path("error").path("code").asString()).isEqualTo("INTERNAL");

				WebCalls.push(client, "steady", "second");
				socket.awaitFrame((frame) -> TestSocket.type("events", "steady").test(frame) && indexes(frame).contains(2L));
				socket.send("{\"type\":\"ping\"}");
				socket.awaitFrame(TestSocket.type("pong"));
				assertThat(socket.closeStatus.get()).as("the socket was closed").isNull();
				assertThat(socket.received).noneMatch(TestSocket.type("events", "broken"))
					.noneMatch(TestSocket.type("presence", "broken"));
			}
		}
	}

	static List<Long> indexes(JsonNode frame) {
		List<Long> indexes = new ArrayList<>();
		frame.get("events").forEach((event) -> indexes.add(event.get("index").asLong()));
		return indexes;
	}

}
