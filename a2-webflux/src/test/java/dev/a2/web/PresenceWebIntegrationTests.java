package dev.a2.web;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Presence over HTTP, SSE and the socket on two instances: a write on one reaches the streams of
 * the other as a patch, and a participant that stops writing expires as a patch too.
 */
class PresenceWebIntegrationTests {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static Instances instances;

	private static WebClient a;

	private static WebClient b;

	private static int portB;

	@BeforeAll
	static void start() {
		instances = new Instances("presence_web");
		ConfigurableApplicationContext first = instances.start(ChatApplication.class, "a2.presence.ttl=6s", "a2.web.poll=200ms");
		ConfigurableApplicationContext second = instances.start(ChatApplication.class, "a2.presence.ttl=6s", "a2.web.poll=200ms");
		a = WebCalls.client(first);
		b = WebCalls.client(second);
		portB = Instances.port(second);
	}

	@AfterAll
	static void stop() {
		instances.close();
	}

	@Test
	void aWriteOnOneInstanceReachesAStreamOnTheOtherAsAPatchAndExpiresAsOne() {
		List<JsonNode> frames = new CopyOnWriteArrayList<>();
		Disposable stream = b.get().uri("/a2/chat/sessions/room/stream").accept(MediaType.TEXT_EVENT_STREAM).retrieve()
			.bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			})
			.filter((event) -> "presence".equals(event.event()))
			.subscribe((event) -> frames.add(json.readTree(event.data())));
		try {
			await().until(() -> !frames.isEmpty());
			assertThat(frames.get(0).get("snapshot").get("participants").isEmpty()).isTrue();

			String written = a.put().uri("/a2/chat/sessions/room/presence").contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"participant\":\"ann\",\"values\":{\"typing\":true,\"status\":\"here\"}}")
				.retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10));
			assertThat(json.readTree(written).get("patches")).hasSize(2);
			// read at once, well inside the TTL: the write committed before A answered
			JsonNode read = json.readTree(b.get().uri("/a2/chat/sessions/room/presence").retrieve().bodyToMono(String.class)
				.block(Duration.ofSeconds(10)));
			assertThat(read.get("participants").get("ann").get("status").get("value").asString()).isEqualTo("here");

			JsonNode patch = awaitPatch(frames, "typing", true);
			assertThat(patch.get("participant").asString()).isEqualTo("ann");

			// ann stops writing: after the TTL both her fields leave, as patches without a value
			awaitPatch(frames, "status", false);
		}
		finally {
			stream.dispose();
		}
	}

	@Test
	void aBadPresenceWriteAnswersInvalidPayload() {
		String answer = a.put().uri("/a2/chat/sessions/room2/presence").contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"participant\":\"a2.me\",\"values\":{\"typing\":true}}")
			.exchangeToMono((response) -> response.bodyToMono(String.class).map((body) -> response.statusCode().value() + " " + body))
			.block(Duration.ofSeconds(10));
		assertThat(answer).startsWith("400 ").contains("INVALID_PAYLOAD").contains("reserved");
	}

	@Test
	void aSocketWritesPresenceAndItsSubscribersGetPatches() {
		try (TestSocket socket = new TestSocket(portB, "chat")) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"desk\"}");
			socket.awaitFrame((frame) -> TestSocket.type("presence", "desk").test(frame) && frame.has("snapshot"));
			socket.send("{\"type\":\"presence\",\"session\":\"desk\",\"participant\":\"bob\",\"values\":{\"status\":\"away\"}}");
			JsonNode patches = socket.awaitFrame((frame) -> TestSocket.type("presence", "desk").test(frame) && frame.has("patches"));
			assertThat(patches.get("patches").get(0).get("participant").asString()).isEqualTo("bob");
			assertThat(patches.get("patches").get(0).get("value").asString()).isEqualTo("away");
		}
	}

	private static JsonNode awaitPatch(List<JsonNode> frames, String field, boolean present) {
		await().atMost(Duration.ofSeconds(20)).until(() -> find(frames, field, present) != null);
		return find(frames, field, present);
	}

	private static JsonNode find(List<JsonNode> frames, String field, boolean present) {
		for (JsonNode frame : frames) {
			for (JsonNode patch : frame.path("patches")) {
				if (patch.get("field").asString().equals(field) && patch.get("value").isNull() != present) {
					return patch;
				}
			}
		}
		return null;
	}

}
