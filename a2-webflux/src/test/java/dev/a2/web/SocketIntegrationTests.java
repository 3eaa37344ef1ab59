package dev.a2.web;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/** The WebSocket protocol of §10 on a real server, with a real WebSocket client. */
class SocketIntegrationTests {

	private static Instances instances;

	private static int port;

	private static WebClient http;

	@BeforeAll
	static void start() {
		instances = new Instances("sockets");
		ConfigurableApplicationContext app = instances.start(ChatApplication.class, "a2.web.ping=300ms",
				"a2.web.max-subscriptions-per-socket=3");
		port = Instances.port(app);
		http = WebCalls.client(app);
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
			assertThat(error.get("ref").asString()).isEqualTo("7");
			assertThat(error.get("error").get("code").asString()).isEqualTo("INVALID_PAYLOAD");
			assertThat(error.get("error").get("message").asString()).contains("events[0].payload.text");
			socket.send("{\"type\":\"ping\"}");
			socket.awaitFrame(TestSocket.type("pong"));
		}
		String page = http.get().uri("/a2/chat/sessions/bad-push/events").retrieve().bodyToMono(String.class).block();
		assertThat(page).contains("\"events\":[]");
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

	static List<Long> indexes(JsonNode frame) {
		List<Long> indexes = new ArrayList<>();
		frame.get("events").forEach((event) -> indexes.add(event.get("index").asLong()));
		return indexes;
	}

}
