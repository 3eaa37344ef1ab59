package dev.a2.web;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every route of §10 on a real server and a real PostgreSQL, as a client sees it: the status, the
 * body, and what history reads back afterwards; and every error code a client can reach, answered
 * as {@code {"error":{"code","message"}}} (never Spring's default error page).
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "a2.web.max-events-per-push=5")
@AutoConfigureWebTestClient
class A2RoutesIntegrationTests {

	static final JsonMapper json = JsonMapper.builder().build();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("a2routes", registry::add);
	}

	@Autowired
	private WebTestClient client;

	private WebTestClient http;

	@BeforeEach
	void patientClient() {
		this.http = patient(this.client);
	}

	// --- push

	@Test
	void pushAnswersTheStoredEventsAndARetryWithTheSameIdsAnswersTheSameIndexes() {
		String body = events(message("m-1", "hi"), message("m-2", "there"));
		JsonNode pushed = ok(push(this.http, "push-1", body));
		JsonNode events = pushed.get("events");
		assertThat(events.size()).isEqualTo(2);
		JsonNode first = events.get(0);
		assertThat(first.propertyNames()).contains("index", "id", "type", "payload", "createdAt");
		assertThat(first.get("index").asLong()).isEqualTo(1);
		assertThat(first.get("id").asString()).isEqualTo("m-1");
		assertThat(first.get("type").asString()).isEqualTo("message.sent");
		assertThat(first.get("payload").get("text").asString()).isEqualTo("hi");
		assertThat(first.get("payload").get("author").asString()).isEqualTo("ann");
		assertThat(Instant.parse(first.get("createdAt").asString())).isBefore(Instant.now().plusSeconds(60));
		assertThat(first.path("cause").isMissingNode() || first.get("cause").isNull()).as("a pushed event has no cause")
			.isTrue();
		assertThat(events.get(1).get("index").asLong()).isEqualTo(2);
		assertThat(events.get(1).get("id").asString()).isEqualTo("m-2");

		JsonNode retried = ok(push(this.http, "push-1", body));
		assertThat(indexes(retried)).containsExactly(1L, 2L);
		assertThat(retried.get("events").get(0).get("createdAt").asString()).isEqualTo(first.get("createdAt").asString());

		JsonNode overlapping = ok(push(this.http, "push-1", events(message("m-2", "there"), message("m-3", "new"))));
		assertThat(indexes(overlapping)).containsExactly(2L, 3L);

		JsonNode page = history(this.http, "push-1", "");
		assertThat(indexes(page)).containsExactly(1L, 2L, 3L);
		assertThat(ids(page)).containsExactly("m-1", "m-2", "m-3");
		assertThat(page.get("head").asLong()).isEqualTo(3);
	}

	@Test
	void anEventWithoutAnIdGetsARandomOne() {
		JsonNode pushed = ok(push(this.http, "push-no-id",
				"{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}]}"));
		String id = pushed.get("events").get(0).get("id").asString();
		assertThat(java.util.UUID.fromString(id).version()).isEqualTo(4);
		assertThat(ids(history(this.http, "push-no-id", ""))).containsExactly(id);
	}

	// --- history

	@Test
	void historyPagesWithAfterAndLimitAndTellsTheHead() {
		ok(push(this.http, "pages", events(message("p-1", "1"), message("p-2", "2"), message("p-3", "3"),
				message("p-4", "4"), message("p-5", "5"))));

		JsonNode all = history(this.http, "pages", "");
		assertThat(indexes(all)).containsExactly(1L, 2L, 3L, 4L, 5L);
		assertThat(all.get("head").asLong()).isEqualTo(5);
		JsonNode stored = all.get("events").get(2);
		assertThat(stored.get("id").asString()).isEqualTo("p-3");
		assertThat(stored.get("type").asString()).isEqualTo("message.sent");
		assertThat(stored.get("payload").get("text").asString()).isEqualTo("3");
		assertThat(Instant.parse(stored.get("createdAt").asString())).isNotNull();

		JsonNode middle = history(this.http, "pages", "?after=2&limit=2");
		assertThat(indexes(middle)).containsExactly(3L, 4L);
		assertThat(middle.get("head").asLong()).isEqualTo(5);

		assertThat(indexes(history(this.http, "pages", "?limit=1"))).containsExactly(1L);
		assertThat(indexes(history(this.http, "pages", "?after=4"))).containsExactly(5L);
		JsonNode past = history(this.http, "pages", "?after=5&limit=1000");
		assertThat(indexes(past)).isEmpty();
		assertThat(past.get("head").asLong()).isEqualTo(5);
	}

	@Test
	void historyOfASessionNeverWrittenIsEmptyWithHeadZero() {
		JsonNode page = history(this.http, "never-written", "");
		assertThat(indexes(page)).isEmpty();
		assertThat(page.get("head").asLong()).isZero();
	}

	// --- state

	@Test
	void stateAnswersTheReducersStateAndTheIndexItIsAt() {
		JsonNode empty = ok(this.http.get().uri("/a2/chat/sessions/state-1/state/summary").exchange());
		assertThat(empty.propertyNames()).containsExactlyInAnyOrder("index", "state");
		assertThat(empty.get("index").asLong()).isZero();
		assertThat(empty.get("state").get("messages").asInt()).isZero();

		ok(push(this.http, "state-1", events(message("s-1", "one"), message("s-2", "two"))));
		JsonNode state = ok(this.http.get().uri("/a2/chat/sessions/state-1/state/summary").exchange());
		assertThat(state.get("index").asLong()).isEqualTo(2);
		assertThat(state.get("state").get("messages").asInt()).isEqualTo(2);
		assertThat(state.get("state").get("last").asString()).isEqualTo("two");
	}

	// --- clear

	@Test
	void clearStartsTheSessionOver() {
		ok(push(this.http, "clear-1", events(message("c-1", "one"), message("c-2", "two"))));
		JsonNode cleared = ok(this.http.delete().uri("/a2/chat/sessions/clear-1").exchange());
		long marker = cleared.get("index").asLong();
		assertThat(marker).isEqualTo(3);

		JsonNode page = history(this.http, "clear-1", "");
		assertThat(indexes(page)).isEmpty();
		assertThat(page.get("head").asLong()).isEqualTo(marker);
		JsonNode state = ok(this.http.get().uri("/a2/chat/sessions/clear-1/state/summary").exchange());
		assertThat(state.get("state").get("messages").asInt()).isZero();

		JsonNode after = ok(push(this.http, "clear-1", events(message("c-3", "again"))));
		assertThat(indexes(after)).containsExactly(marker + 1);
		assertThat(indexes(history(this.http, "clear-1", ""))).containsExactly(marker + 1);
	}

	@Test
	void clearWithIfLastIndexHappensOnlyWhileItHolds() {
		ok(push(this.http, "clear-if", events(message("ci-1", "one"), message("ci-2", "two"))));

		String message = error(this.http.delete().uri("/a2/chat/sessions/clear-if?ifLastIndex=1").exchange(), 409,
				"CONFLICT");
		assertThat(message).contains("2");
		assertThat(indexes(history(this.http, "clear-if", ""))).as("a refused clear changes nothing")
			.containsExactly(1L, 2L);

		JsonNode cleared = ok(this.http.delete().uri("/a2/chat/sessions/clear-if?ifLastIndex=2").exchange());
		assertThat(cleared.get("index").asLong()).isEqualTo(3);
		assertThat(indexes(history(this.http, "clear-if", ""))).isEmpty();

		error(this.http.delete().uri("/a2/chat/sessions/clear-if?ifLastIndex=2").exchange(), 409, "CONFLICT");
		error(this.http.delete().uri("/a2/chat/sessions/clear-if?ifLastIndex=two").exchange(), 400, "INVALID_PAYLOAD");
		error(this.http.delete().uri("/a2/chat/sessions/clear-if?ifLastIndex=-1").exchange(), 400, "INVALID_PAYLOAD");
		assertThat(history(this.http, "clear-if", "").get("head").asLong()).as("no other clear happened").isEqualTo(3);
	}

	// --- INVALID_PAYLOAD

	@Test
	void anUnknownOrMalformedTypeIsRefusedAndNothingIsStored() {
		String unknown = error(push(this.http, "bad-type",
				"{\"events\":[{\"type\":\"message.deleted\",\"payload\":{}}]}"), 400, "INVALID_PAYLOAD");
		assertThat(unknown).contains("events[0]").contains("message.deleted");
		String notAString = error(push(this.http, "bad-type", "{\"events\":[{\"type\":7,\"payload\":{}}]}"), 400,
				"INVALID_PAYLOAD");
		assertThat(notAString).contains("events[0].type");
		String empty = error(push(this.http, "bad-type", "{\"events\":[{\"type\":\"\",\"payload\":{}}]}"), 400,
				"INVALID_PAYLOAD");
		assertThat(empty).contains("events[0].type");
		String missing = error(push(this.http, "bad-type", "{\"events\":[{\"payload\":{}}]}"), 400, "INVALID_PAYLOAD");
		assertThat(missing).contains("events[0].type");
		assertNothingStored(this.http, "bad-type");
	}

	@Test
	void aPayloadThatDoesNotValidateNamesThePathOfTheBadField() {
		String missingText = error(push(this.http, "bad-payload",
				"{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"author\":\"ann\"}}]}"), 400, "INVALID_PAYLOAD");
		assertThat(missingText).contains("events[0].payload.text");
		String blankAuthor = error(push(this.http, "bad-payload",
				events(message("ok-1", "fine"), "{\"type\":\"message.sent\",\"payload\":{\"text\":\"x\",\"author\":\" \"}}")),
				400, "INVALID_PAYLOAD");
		assertThat(blankAuthor).as("the second event is the bad one").contains("events[1].payload.author");
		String noPayload = error(push(this.http, "bad-payload", "{\"events\":[{\"type\":\"message.sent\"}]}"), 400,
				"INVALID_PAYLOAD");
		assertThat(noPayload).contains("events[0].payload");
		String wrongShape = error(push(this.http, "bad-payload",
				"{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":{\"nested\":1},\"author\":\"ann\"}}]}"),
				400, "INVALID_PAYLOAD");
		assertThat(wrongShape).contains("events[0].payload.text");
		assertNothingStored(this.http, "bad-payload");
	}

	/**
	 * A misspelt member would be passed over in silence, and what it meant lost: typing never cleared
	 * ({@code "presense"}), a retry stored twice (an event's {@code "Id"}). It is refused, naming it.
	 */
	@Test
	void aMemberAPushOrAPresenceWriteDoesNotHaveIsRefusedNamingItAndChangesNothing() {
		String body = error(push(this.http, "misspelt", "{\"events\":[" + message("m-1", "hi") + "],"
				+ "\"presense\":{\"participant\":\"ann\",\"values\":{\"typing\":false}}}"), 400, "INVALID_PAYLOAD");
		assertThat(body).isEqualTo("the body has no member 'presense'; its members are events, presence");
		String event = error(push(this.http, "misspelt", "{\"events\":[{\"type\":\"message.sent\",\"Id\":\"m-2\","
				+ "\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}]}"), 400, "INVALID_PAYLOAD");
		assertThat(event).isEqualTo("events[0] has no member 'Id'; its members are id, payload, type");
		String presence = error(push(this.http, "misspelt", "{\"events\":[" + message("m-3", "hi") + "],"
				+ "\"presence\":{\"participant\":\"ann\",\"value\":{\"typing\":false},\"values\":{}}}"), 400,
				"INVALID_PAYLOAD");
		assertThat(presence).isEqualTo("presence has no member 'value'; its members are at, participant, values");
		assertNothingStored(this.http, "misspelt");

		String write = error(this.http.put()
			.uri("/a2/chat/sessions/misspelt/presence")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"participant\":\"ann\",\"values\":{\"typing\":true},\"ttl\":5}")
			.exchange(), 400, "INVALID_PAYLOAD");
		assertThat(write).isEqualTo("the body has no member 'ttl'; its members are at, participant, values");
		assertThat(ok(this.http.get().uri("/a2/chat/sessions/misspelt/presence").exchange()).get("participants").isEmpty())
			.as("nothing written").isTrue();
	}

	@Test
	void eventsMustBeANonEmptyArrayOfAtMostTheConfiguredSize() {
		error(push(this.http, "bad-events", "{\"events\":[]}"), 400, "INVALID_PAYLOAD");
		error(push(this.http, "bad-events", "{}"), 400, "INVALID_PAYLOAD");
		error(push(this.http, "bad-events", "{\"events\":{\"type\":\"message.sent\"}}"), 400, "INVALID_PAYLOAD");
		String notObject = error(push(this.http, "bad-events", "{\"events\":[\"message.sent\"]}"), 400, "INVALID_PAYLOAD");
		assertThat(notObject).contains("events[0]");
		List<String> six = new ArrayList<>();
		for (int i = 1; i <= 6; i++) {
			six.add(message("many-" + i, "n" + i));
		}
		String tooMany = error(push(this.http, "bad-events", events(six.toArray(String[]::new))), 400, "INVALID_PAYLOAD");
		assertThat(tooMany).contains("5");
		String repeated = error(push(this.http, "bad-events", events(message("twice", "a"), message("twice", "b"))),
				400, "INVALID_PAYLOAD");
		assertThat(repeated).contains("events[1].id");
		assertNothingStored(this.http, "bad-events");

		ok(push(this.http, "bad-events", events(six.subList(0, 5).toArray(String[]::new))));
		assertThat(indexes(history(this.http, "bad-events", ""))).as("five, the most, are taken").hasSize(5);
	}

	@Test
	void badHistoryQueryParametersAreRefused() {
		for (String query : List.of("?after=-1", "?after=abc", "?after=1.5", "?after=99999999999999999999", "?limit=0",
				"?limit=1001", "?limit=ten", "?limit=-5")) {
			String message = error(this.http.get().uri("/a2/chat/sessions/query/events" + query).exchange(), 400,
					"INVALID_PAYLOAD");
			assertThat(message).as(query).containsAnyOf("after", "limit");
		}
	}

	/**
	 * A number of the query is ASCII digits, given once: {@code Long.parseLong} took "+1" and "٣" (an
	 * Arabic-Indic three) as 1 and 3, and the first of two {@code after}s was read without a word.
	 */
	@Test
	void aQueryNumberIsPlainDigitsGivenOnce() {
		ok(push(this.http, "digits", events(message("d-1", "one"), message("d-2", "two"), message("d-3", "three"))));
		// a value in a URI variable is encoded whole: "+" travels as %2B, "٣" as %D9%A3
		for (String after : List.of("+1", "\u0663", "1\u0663", " 1", "1 ")) {
			String message = error(this.http.get().uri("/a2/chat/sessions/digits/events?after={after}", after).exchange(), 400,
					"INVALID_PAYLOAD");
			assertThat(message).as("after=%s", after).startsWith("after must be a whole number of 0 or more");
			error(this.http.get().uri("/a2/chat/sessions/digits/stream?after={after}", after).exchange(), 400, "INVALID_PAYLOAD");
		}
		error(this.http.get().uri("/a2/chat/sessions/digits/events?limit={limit}", "+2").exchange(), 400, "INVALID_PAYLOAD");
		String twice = error(this.http.get().uri("/a2/chat/sessions/digits/events?after=1&after=2").exchange(), 400,
				"INVALID_PAYLOAD");
		assertThat(twice).isEqualTo("after is given 2 times; give it once");
		error(this.http.get().uri("/a2/chat/sessions/digits/stream?state=summary&state=summary").exchange(), 400,
				"INVALID_PAYLOAD");
		String clear = error(this.http.delete().uri("/a2/chat/sessions/digits?ifLastIndex={last}", "+3").exchange(), 400,
				"INVALID_PAYLOAD");
		assertThat(clear).startsWith("ifLastIndex must be a whole number");
		error(this.http.delete().uri("/a2/chat/sessions/digits?ifLastIndex=3&ifLastIndex=3").exchange(), 400,
				"INVALID_PAYLOAD");
		assertThat(indexes(history(this.http, "digits", ""))).as("nothing cleared").containsExactly(1L, 2L, 3L);
		assertThat(indexes(history(this.http, "digits", "?after=2"))).containsExactly(3L);
	}

	/** A history page's limit is 1-1000: a refused one is told so, whatever was wrong with it. */
	@Test
	void aRefusedHistoryLimitIsToldItsBounds() {
		for (String limit : List.of("-2", "0", "1001", "ten")) {
			String message = error(this.http.get().uri("/a2/chat/sessions/query/events?limit=" + limit).exchange(), 400,
					"INVALID_PAYLOAD");
			assertThat(message).isEqualTo("limit must be a whole number of 1-1000, was '" + limit + "'");
		}
	}

	@Test
	void malformedJsonIsAnsweredWithWhatIsWrongNeverWithSpringsErrorPage() {
		String truncated = error(push(this.http, "malformed", "{\"events\":[{\"type\":\"message.sent\""), 400,
				"INVALID_PAYLOAD");
		// what is wrong, not where Jackson would say it began had it kept the source ("[Source: REDACTED …]")
		assertThat(truncated).contains("not valid JSON").contains("end-of-input").doesNotContain("Source:");
		String unquoted = error(push(this.http, "malformed", "{events:[]}"), 400, "INVALID_PAYLOAD");
		assertThat(unquoted).contains("not valid JSON");
		String empty = error(this.http.post().uri("/a2/chat/sessions/malformed/events")
			.contentType(MediaType.APPLICATION_JSON).exchange(), 400, "INVALID_PAYLOAD");
		assertThat(empty).contains("empty");
		String text = error(this.http.post().uri("/a2/chat/sessions/malformed/events").contentType(MediaType.APPLICATION_JSON)
			.bodyValue("hello").exchange(), 400, "INVALID_PAYLOAD");
		assertThat(text).contains("not valid JSON");
		assertNothingStored(this.http, "malformed");
	}

	// --- the other codes

	@Test
	void anUnknownContractIsNotFoundOnEveryRoute() {
		String push = error(push(this.http, "nope", "x", events(message("u-1", "hi"))), 404, "UNKNOWN_CONTRACT");
		assertThat(push).contains("nope");
		error(this.http.get().uri("/a2/nope/sessions/x/events").exchange(), 404, "UNKNOWN_CONTRACT");
		error(this.http.get().uri("/a2/nope/sessions/x/state/summary").exchange(), 404, "UNKNOWN_CONTRACT");
		error(this.http.delete().uri("/a2/nope/sessions/x").exchange(), 404, "UNKNOWN_CONTRACT");
		assertNothingStored(this.http, "x");
	}

	@Test
	void anUnknownReducerIsNotFound() {
		String message = error(this.http.get().uri("/a2/chat/sessions/reducer/state/nope").exchange(), 404,
				"UNKNOWN_REDUCER");
		assertThat(message).contains("nope");
	}

	@Test
	void aBodyOverTheLimitIsTooLargeAndNothingIsStored() {
		String big = "x".repeat(300 * 1024);
		String message = error(push(this.http, "too-large",
				"{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"" + big + "\",\"author\":\"ann\"}}]}"),
				413, "PAYLOAD_TOO_LARGE");
		assertThat(message).contains(String.valueOf(256 * 1024));
		assertNothingStored(this.http, "too-large");
	}

	// --- paths and methods A2 has no route for

	@Test
	void anUnknownPathUnderTheBasePathIsNotFoundInA2sShape() {
		String message = error(this.http.get().uri("/a2/chat/sessions/s/nope").exchange(), 404, "NOT_FOUND");
		assertThat(message).contains("/a2/chat/sessions/s/nope");
		error(this.http.get().uri("/a2/chat").exchange(), 404, "NOT_FOUND");
		error(this.http.post().uri("/a2").exchange(), 404, "NOT_FOUND");
		error(this.http.get().uri("/a2/chat/sessions/s/events/").exchange(), 404, "NOT_FOUND");
		error(this.http.get().uri("/a2/nope.js").exchange(), 404, "NOT_FOUND");
		// outside the base path the application's own 404 answers, untouched
		EntityExchangeResult<byte[]> outside = this.http.get().uri("/elsewhere/chat").exchange().expectBody().returnResult();
		assertThat(outside.getStatus().value()).isEqualTo(404);
		assertThat(json.readTree(outside.getResponseBody()).path("error").isObject()).as("A2's error shape").isFalse();
	}

	@Test
	void aKnownPathAskedWithAnotherMethodIsNotAllowedWithTheMethodsItHas() {
		notAllowed(this.http.get().uri("/a2/chat/sessions/s").exchange(), "DELETE");
		notAllowed(this.http.delete().uri("/a2/chat/sessions/s/stream").exchange(), "GET");
		notAllowed(this.http.put().uri("/a2/chat/sessions/s/events").contentType(MediaType.APPLICATION_JSON)
			.bodyValue(events(message("m-1", "hi"))).exchange(), "GET", "POST");
		notAllowed(this.http.post().uri("/a2/chat/sessions/s/state/summary").exchange(), "GET");
		notAllowed(this.http.delete().uri("/a2/chat/sessions/s/presence").exchange(), "GET", "PUT");
		notAllowed(this.http.post().uri("/a2/client.js").exchange(), "GET");
		assertNothingStored(this.http, "s");
	}

	private static void notAllowed(WebTestClient.ResponseSpec response, String... allowed) {
		response.expectHeader().value(HttpHeaders.ALLOW, (allow) -> assertThat(allow).as("the Allow header").isNotNull()
			.satisfies((methods) -> assertThat(methods.split(",\\s*")).containsExactlyInAnyOrder(allowed)));
		String message = error(response, 405, "METHOD_NOT_ALLOWED");
		assertThat(message).contains(String.join(", ", allowed));
	}

	// --- helpers shared by the web tests

	static WebTestClient patient(WebTestClient client) {
		return client.mutate().responseTimeout(Duration.ofSeconds(60)).build();
	}

	static String message(String id, String text) {
		return "{\"type\":\"message.sent\",\"id\":\"" + id + "\",\"payload\":{\"text\":\"" + text + "\",\"author\":\"ann\"}}";
	}

	static String events(String... events) {
		return "{\"events\":[" + String.join(",", events) + "]}";
	}

	static WebTestClient.ResponseSpec push(WebTestClient http, String session, String body) {
		return push(http, "chat", session, body);
	}

	static WebTestClient.ResponseSpec push(WebTestClient http, String contract, String session, String body) {
		return http.post()
			.uri("/a2/{contract}/sessions/{session}/events", contract, session)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange();
	}

	/** The body of a 200 answer. */
	static JsonNode ok(WebTestClient.ResponseSpec response) {
		EntityExchangeResult<byte[]> result = response.expectBody().returnResult();
		String body = (result.getResponseBody() != null) ? new String(result.getResponseBody()) : "";
		assertThat(result.getStatus().value()).as("status; body %s", body).isEqualTo(200);
		assertThat(result.getResponseHeaders().getContentType()).isNotNull()
			.matches((type) -> type.isCompatibleWith(MediaType.APPLICATION_JSON), "JSON");
		return json.readTree(body);
	}

	/**
	 * Asserts an error as §10 has it, {@code {"error":{"code","message"}}} with its status and JSON
	 * content type, and answers its message.
	 */
	static String error(WebTestClient.ResponseSpec response, int status, String code) {
		EntityExchangeResult<byte[]> result = response.expectBody().returnResult();
		String body = (result.getResponseBody() != null) ? new String(result.getResponseBody()) : "";
		assertThat(result.getStatus().value()).as("status; body %s", body).isEqualTo(status);
		assertThat(result.getResponseHeaders().getContentType()).as("content type; body %s", body).isNotNull()
			.matches((type) -> type.isCompatibleWith(MediaType.APPLICATION_JSON), "JSON");
		JsonNode node = json.readTree(body);
		assertThat(node.propertyNames()).as(body).containsExactly("error");
		assertThat(node.get("error").propertyNames()).as(body).containsExactlyInAnyOrder("code", "message");
		assertThat(node.get("error").get("code").asString()).as(body).isEqualTo(code);
		String message = node.get("error").get("message").asString();
		assertThat(message).as(body).isNotBlank().doesNotContain("Exception");
		return message;
	}

	static JsonNode history(WebTestClient http, String session, String query) {
		return ok(http.get().uri("/a2/chat/sessions/{session}/events" + query, session).exchange());
	}

	static void assertNothingStored(WebTestClient http, String session) {
		JsonNode page = history(http, session, "?limit=1000");
		assertThat(page.get("events").size()).as("events stored in %s: %s", session, page).isZero();
		assertThat(page.get("head").asLong()).as("head of %s", session).isZero();
	}

	static List<Long> indexes(JsonNode body) {
		List<Long> indexes = new ArrayList<>();
		body.get("events").forEach((event) -> indexes.add(event.get("index").asLong()));
		return indexes;
	}

	static List<String> ids(JsonNode body) {
		List<String> ids = new ArrayList<>();
		body.get("events").forEach((event) -> ids.add(event.get("id").asString()));
		return ids;
	}

}
