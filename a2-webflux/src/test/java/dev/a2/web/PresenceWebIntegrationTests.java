package dev.a2.web;

import java.time.Duration;
import java.time.Instant;
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

	/** Each parses, as an instant or epoch milliseconds, to a time before 1970. */
	private static final List<String> BEFORE_THE_EPOCH = List.of("\"-100000-01-01T00:00:00Z\"",
			"\"-999999999-01-01T00:00:00Z\"", "-9223372036854775808", "-300000000000000000", "-1");

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
			// the server's clock, on which a client stamps the at of its writes
			assertThat(frames.get(0).get("now").isIntegralNumber()).isTrue();

			String written = a.put().uri("/a2/chat/sessions/room/presence").contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"participant\":\"ann\",\"values\":{\"typing\":true,\"status\":\"here\"}}")
				.retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10));
			assertThat(json.readTree(written).get("patches")).hasSize(2);
			assertThat(json.readTree(written).get("now").isIntegralNumber()).isTrue();
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
	void anAtBeforeTheEpochIsRefusedNamingItAndStoresNothing() {
		// an instant and epoch milliseconds PostgreSQL cannot store, and two that overflowed on the way to it
		for (String at : BEFORE_THE_EPOCH) {
			String write = "{\"participant\":\"p1\",\"values\":{\"typing\":true},\"at\":" + at + "}";
			assertThat(answer(a.put().uri("/a2/chat/sessions/ancient/presence").contentType(MediaType.APPLICATION_JSON)
				.bodyValue(write))).as(at).startsWith("400 ").contains("INVALID_PAYLOAD").contains("at must be 1970-01-01T00:00:00Z or later");
			String push = "{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}],\"presence\":"
					+ write + "}";
			assertThat(answer(a.post().uri("/a2/chat/sessions/ancient/events").contentType(MediaType.APPLICATION_JSON)
				.bodyValue(push))).as(at).startsWith("400 ").contains("INVALID_PAYLOAD").contains("presence.at must be");
		}
		assertThat(answer(a.get().uri("/a2/chat/sessions/ancient/presence"))).isEqualTo("200 {\"participants\":{}}");
		assertThat(answer(a.get().uri("/a2/chat/sessions/ancient/events"))).startsWith("200 ").contains("\"head\":0");
	}

	@Test
	void aSocketPresenceFrameWithAnAtBeforeTheEpochIsAnsweredInvalidPayload() {
		try (TestSocket socket = new TestSocket(portB, "chat")) {
			socket.send("{\"type\":\"presence\",\"session\":\"ancient-ws\",\"participant\":\"p1\",\"values\":{\"typing\":true},"
					+ "\"at\":\"-100000-01-01T00:00:00Z\"}");
			JsonNode error = socket.awaitFrame(TestSocket.type("error"));
			assertThat(error.path("session").asString()).isEqualTo("ancient-ws");
			assertThat(error.path("error").path("code").asString()).as("%s", error).isEqualTo("INVALID_PAYLOAD");
			assertThat(error.path("error").path("message").asString()).startsWith("at must be");
		}
	}

	@Test
	void anAtFromTheFarthestFutureIsTakenAsTheServersTime() {
		for (String at : List.of("9223372036854775807", "\"+1000000000-12-31T23:59:59.999999999Z\"")) {
			assertThat(answer(a.put().uri("/a2/chat/sessions/future/presence").contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"participant\":\"p1\",\"values\":{\"typing\":true},\"at\":" + at + "}"))).as(at).startsWith("200 ");
			JsonNode read = json.readTree(a.get().uri("/a2/chat/sessions/future/presence").retrieve().bodyToMono(String.class)
				.block(Duration.ofSeconds(10)));
			// the server's time when it wrote, which is before this read
			assertThat(Instant.parse(read.get("participants").get("p1").get("typing").get("at").asString())).as(at)
				.isBeforeOrEqualTo(Instant.now());
		}
	}

	@Test
	void aSocketWritesPresenceAndItsSubscribersGetPatches() {
		try (TestSocket socket = new TestSocket(portB, "chat")) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"desk\"}");
			JsonNode snapshot = socket.awaitFrame((frame) -> TestSocket.type("presence", "desk").test(frame) && frame.has("snapshot"));
			assertThat(snapshot.get("now").isIntegralNumber()).isTrue();
			socket.send("{\"type\":\"presence\",\"session\":\"desk\",\"participant\":\"bob\",\"values\":{\"status\":\"away\"}}");
			JsonNode patches = socket.awaitFrame((frame) -> TestSocket.type("presence", "desk").test(frame) && frame.has("patches"));
			assertThat(patches.get("now").isIntegralNumber()).isTrue();
			assertThat(patches.get("patches").get(0).get("participant").asString()).isEqualTo("bob");
			assertThat(patches.get("patches").get(0).get("value").asString()).isEqualTo("away");
		}
	}

	/** The status and body of an answer, as {@code "400 {…}"}. */
	private static String answer(WebClient.RequestHeadersSpec<?> request) {
		return request.exchangeToMono((response) -> response.bodyToMono(String.class).defaultIfEmpty("")
			.map((body) -> response.statusCode().value() + " " + body)).block(Duration.ofSeconds(10));
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
