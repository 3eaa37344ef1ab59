package dev.a2.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The tour's flows over HTTP, on the sample's embedded PostgreSQL, for machines without a browser:
 * the same things {@code TourBrowserTests} clicks through.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "sample.assistant.token-delay=40ms", "a2.drain.sweep-interval=200ms" })
@AutoConfigureWebTestClient
class SampleApplicationIntegrationTests {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	@Autowired
	private WebTestClient http;

	@Test
	void twoParticipantsSeeEachOthersMessagesAndTypingOnTheStream() {
		Flux<ServerSentEvent<String>> stream = this.http.get()
			.uri("/a2/chat/sessions/together/stream?after=0&state=summary")
			.accept(MediaType.TEXT_EVENT_STREAM)
			.exchange()
			.expectStatus().isOk()
			.returnResult(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			})
			.getResponseBody();
		List<ServerSentEvent<String>> seen = java.util.Collections.synchronizedList(new ArrayList<>());
		var subscription = stream.subscribe(seen::add);
		try {
			presence("together", "bob", Map.of("online", true, "typing", true));
			push("together", message("hi bob", "ann"));
			await().atMost(PATIENCE).untilAsserted(() -> {
				assertThat(seen).anySatisfy((event) -> {
					assertThat(event.event()).isEqualTo("events");
					assertThat(JsonPath.<List<String>>read(event.data(), "$.events[*].payload.text")).contains("hi bob");
				});
				assertThat(seen).anySatisfy((event) -> {
					assertThat(event.event()).isEqualTo("presence");
					assertThat(event.data()).contains("\"bob\"").contains("\"typing\"");
				});
				assertThat(seen).anySatisfy((event) -> {
					assertThat(event.event()).isEqualTo("state");
					assertThat(event.data()).contains("\"messages\":1").contains("ann: hi bob");
				});
			});
		}
		finally {
			subscription.dispose();
		}
	}

	@Test
	void theAssistantStreamsItsReplyAndCompletesIt() {
		long asked = push("streamed", message("@assistant how are you?", "ann"));
		await().atMost(PATIENCE).until(() -> types("streamed").contains("reply.completed"));
		List<Map<String, Object>> events = events("streamed");
		List<Map<String, Object>> deltas = ofType(events, "reply.delta");
		String reply = deltas.stream().map((e) -> (String) payload(e).get("text")).reduce("", String::concat);
		List<String> tokens = AssistantConsumer.tokens(new TourContract.MessageSent("@assistant how are you?", "ann", "ann"));
		assertThat(reply).startsWith("Hello ann. You asked: \u201chow are you?\u201d").isEqualTo(String.join("", tokens));
		assertThat(payload(deltas.get(0))).as("the first token goes out at once").containsEntry("text", tokens.get(0));
		assertThat(deltas).hasSizeLessThanOrEqualTo(tokens.size());
		assertThat(deltas).allSatisfy((delta) -> {
			assertThat(((Number) payload(delta).get("replyTo")).longValue()).isEqualTo(asked);
			assertThat(payload(delta)).containsEntry("attempt", 1);
			assertThat(cause(delta)).containsEntry("consumer", "assistant");
		});
	}

	@Test
	void aToolThatNeedsApprovalWaitsForAPersonThenTheReplyGoesOn() {
		push("pizza", message("@assistant order a pizza for us", "ann"));
		await().atMost(PATIENCE).until(() -> types("pizza").contains("tool.approval.requested"));
		Map<String, Object> requested = payload(ofType(events("pizza"), "tool.approval.requested").get(0));
		assertThat(requested).containsEntry("name", "order_pizza");
		assertThat(types("pizza")).doesNotContain("tool.result", "reply.completed");

		push("pizza", Map.of("type", "tool.approved", "payload", Map.of("callId", requested.get("callId"))));
		await().atMost(PATIENCE).until(() -> types("pizza").contains("reply.completed"));
		assertThat(payload(ofType(events("pizza"), "tool.result").get(0))).containsEntry("rejected", false)
			.containsEntry("callId", requested.get("callId"));
		String reply = ofType(events("pizza"), "reply.delta").stream()
			.map((e) -> (String) payload(e).get("text"))
			.reduce("", String::concat);
		assertThat(reply).startsWith("Done: Pizza order #");
	}

	@Test
	void stopEndsTheReplyOfItsThreadOnly() {
		long annAsked = push("stopping", message("@assistant a long story please", "ann"));
		long bobAsked = push("stopping", message("@assistant and one for me", "bob"));
		await().atMost(PATIENCE).until(() -> repliesTo("stopping", annAsked) > 0);
		push("stopping", Map.of("type", "stop.requested", "payload", Map.of("thread", "ann")));

		// bob's thread is not stopped: his reply completes; ann's reply never does
		await().atMost(PATIENCE).until(() -> completed("stopping").contains(bobAsked));
		await().atMost(PATIENCE).until(() -> pending(this.http, "assistant") == 0);
		assertThat(completed("stopping")).containsExactly(bobAsked);
		String whole = String.join("", AssistantConsumer.tokens(new TourContract.MessageSent("@assistant a long story please", "ann", "ann")));
		assertThat(replyText("stopping", annAsked)).isNotEmpty().isNotEqualTo(whole);
		assertThat(ofType(events("stopping"), "reply.stopped")).singleElement()
			.satisfies((stopped) -> assertThat(((Number) payload(stopped).get("replyTo")).longValue()).isEqualTo(annAsked));
	}

	@Test
	void aThreadsRepliesKeepTheirOrder() {
		long first = push("ordered", message("@assistant first", "ann"));
		long second = push("ordered", message("@assistant second", "ann"));
		await().atMost(PATIENCE).until(() -> completed("ordered").size() == 2);
		List<Map<String, Object>> events = events("ordered");
		long firstCompletedAt = ofType(events, "reply.completed").stream()
			.filter((e) -> ((Number) payload(e).get("replyTo")).longValue() == first)
			.mapToLong((e) -> ((Number) e.get("index")).longValue())
			.findFirst()
			.orElseThrow();
		long secondStartedAt = ofType(events, "reply.delta").stream()
			.filter((e) -> ((Number) payload(e).get("replyTo")).longValue() == second)
			.mapToLong((e) -> ((Number) e.get("index")).longValue())
			.min()
			.orElseThrow();
		assertThat(secondStartedAt).isGreaterThan(firstCompletedAt);
	}

	@Test
	void theWordCountReadsItsOwnWrites() {
		push("counted", message("one two three", "ann"));
		push("counted", message("four five", "bob"));
		// no waiting: consume drives the projection through both messages before answering
		this.http.get().uri("/rooms/counted/words").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.words").isEqualTo(5)
			.jsonPath("$.through").value((Integer through) -> assertThat(through).isGreaterThanOrEqualTo(2));
	}

	/** "Clear the room" starts it over, its word count too: the words of the messages before it counted on. */
	@Test
	void theWordCountStartsOverWithAClear() {
		push("recounted", message("one two three", "ann"));
		assertWords("recounted", 3);
		this.http.delete().uri("/a2/chat/sessions/recounted").exchange().expectStatus().isOk();
		assertWords("recounted", 0);
		push("recounted", message("four five", "bob"));
		assertWords("recounted", 2);
		push("recounted", message("six", "ann"));
		assertWords("recounted", 3);
	}

	private void assertWords(String room, int words) {
		this.http.get().uri("/rooms/" + room + "/words").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.words").isEqualTo(words);
	}

	@Test
	void aRefusedWordDeadLettersItsMessageBlocksTheRoomAndARetryUnblocksIt() {
		long refused = push("flaky-retry", message("this goes kaboom", "ann"));
		long after = push("flaky-retry", message("and this waits", "ann"));
		await().atMost(PATIENCE).untilAsserted(() -> this.http.get()
			.uri("/actuator/a2/dead-letters?contract=chat&session=flaky-retry")
			.exchange()
			.expectBody()
			.jsonPath("$[0].consumer").isEqualTo("delivery")
			.jsonPath("$[0].index").isEqualTo(refused)
			.jsonPath("$[0].lastError").value((String error) -> assertThat(error).contains("'kaboom'")));
		assertThat(delivered("flaky-retry")).isEmpty();

		this.http.put().uri("/demo/refused-word").bodyValue(Map.of("word", "")).exchange().expectStatus().isOk();
		try {
			redrive("flaky-retry", refused, "retry").expectStatus().isOk();
			await().atMost(PATIENCE).until(() -> delivered("flaky-retry").equals(List.of(refused, after)));
		}
		finally {
			this.http.put().uri("/demo/refused-word").bodyValue(Map.of("word", "kaboom")).exchange().expectStatus().isOk();
		}
	}

	@Test
	void skippingADeadLetterUnblocksTheRoomWithoutDeliveringIt() {
		long refused = push("flaky-skip", message("kaboom again", "ann"));
		long after = push("flaky-skip", message("next one", "ann"));
		await().atMost(PATIENCE).untilAsserted(() -> this.http.get()
			.uri("/actuator/a2/dead-letters?contract=chat&session=flaky-skip")
			.exchange()
			.expectBody()
			.jsonPath("$[0].index").isEqualTo(refused));
		redrive("flaky-skip", refused, "skip").expectStatus().isOk();
		await().atMost(PATIENCE).until(() -> delivered("flaky-skip").equals(List.of(after)));
		redrive("flaky-skip", refused, "skip").expectStatus().isNotFound();
	}

	@Test
	void theSummaryIsServedAndAPushWithTheSameIdIsStoredOnce() {
		Map<String, Object> event = Map.of("type", "message.sent", "id", "m-1", "payload",
				Map.of("text", "hello", "author", "ann", "thread", "ann"));
		long index = push("summary", event);
		assertThat(push("summary", event)).isEqualTo(index);
		this.http.get().uri("/a2/chat/sessions/summary/state/summary").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.state.messages").isEqualTo(1)
			.jsonPath("$.state.lastMessage").isEqualTo("ann: hello");
	}

	@Test
	void badInputGetsACleanErrorAndChangesNothing() {
		this.http.post().uri("/a2/chat/sessions/bad-input/events")
			.bodyValue(Map.of("events", List.of(message(" ", "ann"))))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((String message) -> assertThat(message).contains("events[0].payload.text"));
		this.http.put().uri("/a2/chat/sessions/bad-input/presence")
			.bodyValue(Map.of("participant", "ann", "values", Map.of("typing", "very")))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD");
		this.http.get().uri("/a2/chat/sessions/bad-input/events").exchange().expectBody().jsonPath("$.head").isEqualTo(0);
		// the sample's own route: A2's errors from application code answer as problem details
		this.http.get().uri("/rooms/bad%20room/words").exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.code").isEqualTo("INVALID_PAYLOAD");
	}

	@Test
	void thePagesAreServed() {
		this.http.get().uri("/").exchange().expectStatus().isOk()
			.expectBody(String.class).value((page) -> assertThat(page).contains("tour.js"));
		this.http.get().uri("/actuator/a2/console").accept(MediaType.TEXT_HTML).exchange().expectStatus().isOk()
			.expectBody(String.class).value((page) -> assertThat(page).contains("A2 operator console"));
	}

	private static Map<String, Object> message(String text, String author) {
		return Map.of("type", "message.sent", "id", UUID.randomUUID().toString(), "payload",
				Map.of("text", text, "author", author, "thread", author));
	}

	/** Pushes one event and answers its index. */
	private long push(String room, Map<String, Object> event) {
		String body = this.http.post()
			.uri("/a2/chat/sessions/{room}/events", room)
			.bodyValue(Map.of("events", List.of(event)))
			.exchange()
			.expectStatus().isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		return ((Number) JsonPath.read(body, "$.events[0].index")).longValue();
	}

	private void presence(String room, String participant, Map<String, Object> values) {
		this.http.put().uri("/a2/chat/sessions/{room}/presence", room)
			.bodyValue(Map.of("participant", participant, "values", values))
			.exchange()
			.expectStatus().is2xxSuccessful();
	}

	private WebTestClient.ResponseSpec redrive(String room, long index, String action) {
		return this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "chat", "session", room, "consumer", "delivery", "index", index, "action", action))
			.exchange();
	}

	private List<Map<String, Object>> events(String room) {
		String body = this.http.get().uri("/a2/chat/sessions/{room}/events?limit=1000", room)
			.exchange()
			.expectStatus().isOk()
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		return JsonPath.read(body, "$.events");
	}

	private List<String> types(String room) {
		return events(room).stream().map((e) -> (String) e.get("type")).toList();
	}

	private long repliesTo(String room, long index) {
		return ofType(events(room), "reply.delta").stream()
			.filter((e) -> ((Number) payload(e).get("replyTo")).longValue() == index)
			.count();
	}

	private String replyText(String room, long index) {
		return ofType(events(room), "reply.delta").stream()
			.filter((e) -> ((Number) payload(e).get("replyTo")).longValue() == index)
			.map((e) -> (String) payload(e).get("text"))
			.reduce("", String::concat);
	}

	private List<Long> completed(String room) {
		return ofType(events(room), "reply.completed").stream()
			.map((e) -> ((Number) payload(e).get("replyTo")).longValue())
			.toList();
	}

	private List<Long> delivered(String room) {
		return ofType(events(room), "message.delivered").stream()
			.map((e) -> ((Number) payload(e).get("index")).longValue())
			.toList();
	}

	/** Units of the consumer's work not done yet, as the actuator tells. */
	static long pending(WebTestClient http, String consumer) {
		String body = http.get().uri("/actuator/a2").exchange().expectBody(String.class).returnResult().getResponseBody();
		List<Number> pending = JsonPath.read(body, "$.consumers[?(@.name == '" + consumer + "')].pending");
		return pending.get(0).longValue();
	}

	private static List<Map<String, Object>> ofType(List<Map<String, Object>> events, String type) {
		return events.stream().filter((e) -> type.equals(e.get("type"))).toList();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> payload(Map<String, Object> event) {
		return (Map<String, Object>) event.get("payload");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> cause(Map<String, Object> event) {
		return (Map<String, Object>) event.get("cause");
	}

}
