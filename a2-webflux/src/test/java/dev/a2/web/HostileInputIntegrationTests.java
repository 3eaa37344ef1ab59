package dev.a2.web;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import dev.a2.test.TestPostgres;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.socket.WebSocketMessage;
import org.springframework.web.reactive.socket.WebSocketSession;
import org.springframework.web.reactive.socket.client.ReactorNettyWebSocketClient;

import static dev.a2.web.A2RoutesIntegrationTests.assertNothingStored;
import static dev.a2.web.A2RoutesIntegrationTests.error;
import static dev.a2.web.A2RoutesIntegrationTests.events;
import static dev.a2.web.A2RoutesIntegrationTests.history;
import static dev.a2.web.A2RoutesIntegrationTests.indexes;
import static dev.a2.web.A2RoutesIntegrationTests.message;
import static dev.a2.web.A2RoutesIntegrationTests.ok;
import static dev.a2.web.A2RoutesIntegrationTests.push;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What a hostile or broken client may send (§12): oversized, deeply nested, malformed or
 * mis-encoded bodies, reserved and overlong ids, bad session ids, bad socket frames and foreign
 * origins. Each is answered with a clear error, never a 500, and stores nothing.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "a2.web.max-push-bytes=32KB", "a2.web.max-string-length=4096",
				"logging.level.dev.a2.web.WebErrors=debug" })
@AutoConfigureWebTestClient
@ExtendWith(OutputCaptureExtension.class)
class HostileInputIntegrationTests {

	private static final int LIMIT = 32 * 1024;

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("hostile", registry::add);
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

	// --- sizes

	@Test
	void aBodyOverTheLimitWithItsContentLengthIsTooLargeAndNothingIsStored() {
		byte[] body = withText("x".repeat(1024 * 1024)).getBytes(StandardCharsets.UTF_8);
		String message = error(this.http.post().uri("/a2/chat/sessions/big-length/events")
			.contentType(MediaType.APPLICATION_JSON).contentLength(body.length).bodyValue(body).exchange(), 413,
				"PAYLOAD_TOO_LARGE");
		assertThat(message).contains(String.valueOf(LIMIT));
		assertNothingStored(this.http, "big-length");
	}

	@Test
	void aChunkedBodyOverTheLimitIsTooLargeAndNothingIsStored() {
		byte[] body = withText("x".repeat(1024 * 1024)).getBytes(StandardCharsets.UTF_8);
		String message = error(this.http.post().uri("/a2/chat/sessions/big-chunked/events")
			.contentType(MediaType.APPLICATION_JSON).body(chunked(body), DataBuffer.class).exchange(), 413,
				"PAYLOAD_TOO_LARGE");
		assertThat(message).contains(String.valueOf(LIMIT));
		assertNothingStored(this.http, "big-chunked");
	}

	@Test
	void aChunkedBodyWithinTheLimitIsStored() {
		byte[] body = events(message("chunk-1", "x".repeat(3000))).getBytes(StandardCharsets.UTF_8);
		JsonNode pushed = ok(this.http.post().uri("/a2/chat/sessions/small-chunked/events")
			.contentType(MediaType.APPLICATION_JSON).body(chunked(body), DataBuffer.class).exchange());
		assertThat(indexes(pushed)).containsExactly(1L);
	}

	@Test
	void deepNestingIsRefusedAndNothingIsStored() {
		String deep = "[".repeat(10_000) + "]".repeat(10_000);
		String body = "{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"x\",\"author\":\"ann\",\"deep\":" + deep
				+ "}}]}";
		assertThat(body.length()).isLessThan(LIMIT);
		String message = error(push(this.http, "deep", body), 400, "INVALID_PAYLOAD");
		// valid JSON, over a limit: which one, and where it is set
		assertThat(message).isEqualTo("the body is nested deeper than 32 levels, the most a body may have (a2.web.max-json-depth)");
		String unterminated = error(push(this.http, "deep", "{\"events\":" + "[".repeat(10_000)), 400, "INVALID_PAYLOAD");
		assertThat(unterminated).contains("nested deeper than 32 levels");
		assertNothingStored(this.http, "deep");
	}

	@Test
	void aStringOrNameOrNumberOverTheLimitIsRefusedAndNothingIsStored() {
		String longString = error(push(this.http, "huge-string", withText("y".repeat(5000))), 400, "INVALID_PAYLOAD");
		// the limit and where it is set, not "not valid JSON" with a length as far as the parser had read
		assertThat(longString).isEqualTo("the body holds a string longer than 4096 characters, the most a string may have "
				+ "(a2.web.max-string-length)");
		String longName = error(push(this.http, "huge-string",
				"{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"x\",\"author\":\"ann\",\"" + "n".repeat(5000)
						+ "\":1}}]}"), 400, "INVALID_PAYLOAD");
		assertThat(longName).contains("a string longer than 4096 characters");
		error(push(this.http, "huge-string", "{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"x\","
				+ "\"author\":\"ann\",\"n\":" + "9".repeat(5000) + "}}]}"), 400, "INVALID_PAYLOAD");
		assertNothingStored(this.http, "huge-string");

		ok(push(this.http, "huge-string", withText("y".repeat(4000))));
	}

	// --- encodings and shapes

	@Test
	void invalidUtf8IsRefusedAndNothingIsStored() {
		Map<String, byte[]> bad = new LinkedHashMap<>();
		bad.put("FF FE (never in UTF-8)", new byte[] { (byte) 0xFF, (byte) 0xFE });
		bad.put("C0 AF (an overlong '/')", new byte[] { (byte) 0xC0, (byte) 0xAF });
		bad.put("E0 80 AF (an overlong '/')", new byte[] { (byte) 0xE0, (byte) 0x80, (byte) 0xAF });
		bad.put("E2 82 (a truncated sequence)", new byte[] { (byte) 0xE2, (byte) 0x82 });
		bad.put("80 (a lone continuation byte)", new byte[] { (byte) 0x80 });
		bad.put("F8 88 80 80 80 (a five-byte form)", new byte[] { (byte) 0xF8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80 });
		List<String> accepted = new ArrayList<>();
		int i = 0;
		for (Map.Entry<String, byte[]> entry : bad.entrySet()) {
			String session = "utf8-" + (i++);
			EntityExchangeResult<byte[]> result = pushBytes(session, entry.getValue()).expectBody().returnResult();
			String body = new String(result.getResponseBody(), StandardCharsets.UTF_8);
			if (result.getStatus().value() != 400 || !body.contains("\"INVALID_PAYLOAD\"")) {
				accepted.add(entry.getKey() + " answered " + result.getStatus().value() + " " + body);
			}
			else {
				assertNothingStored(this.http, session);
			}
		}
		assertThat(accepted).as("invalid UTF-8 that was not refused").isEmpty();
	}

	@Test
	void anEncodedSurrogateIsInvalidUtf8AndIsRefused() {
		// U+D800 encoded as if it were a character (CESU-8): not UTF-8 (RFC 3629 §3)
		error(pushBytes("surrogate", new byte[] { (byte) 0xED, (byte) 0xA0, (byte) 0x80 }), 400, "INVALID_PAYLOAD");
		assertNothingStored(this.http, "surrogate");
	}

	private WebTestClient.ResponseSpec pushBytes(String session, byte[] inText) {
		ByteArrayOutputStream body = new ByteArrayOutputStream();
		body.writeBytes("{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"a".getBytes(StandardCharsets.UTF_8));
		body.writeBytes(inText);
		body.writeBytes("b\",\"author\":\"ann\"}}]}".getBytes(StandardCharsets.UTF_8));
		return this.http.post().uri("/a2/chat/sessions/{session}/events", session).contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body.toByteArray()).exchange();
	}

	@Test
	void textsPostgresCannotHoldAreRefusedOrStoredIntactNeverAFailure() {
		// JSON allows the escapes of NUL and of a lone surrogate in strings; PostgreSQL's text and jsonb hold neither
		Map<String, String> bodies = new LinkedHashMap<>();
		bodies.put("a payload text with \\u0000", withText("a\\u0000b"));
		bodies.put("a payload text with a lone surrogate \\ud800", withText("a\\ud800b"));
		bodies.put("an event id with \\u0000", "{\"events\":[{\"type\":\"message.sent\",\"id\":\"a\\u0000b\","
				+ "\"payload\":{\"text\":\"a\",\"author\":\"ann\"}}]}");
		List<String> problems = new ArrayList<>();
		int i = 0;
		for (Map.Entry<String, String> entry : bodies.entrySet()) {
			String session = "unholdable-" + (i++);
			EntityExchangeResult<byte[]> result = push(this.http, session, entry.getValue()).expectBody().returnResult();
			String body = new String(result.getResponseBody(), StandardCharsets.UTF_8);
			int status = result.getStatus().value();
			if (status == 400 && body.contains("\"INVALID_PAYLOAD\"")) {
				assertNothingStored(this.http, session);
			}
			else if (status == 200) {
				JsonNode stored = history(this.http, session, "").get("events").get(0);
				String text = stored.get("payload").get("text").asString();
				String id = stored.get("id").asString();
				String nul = "a" + (char) 0 + "b";
				String surrogate = "a" + (char) 0xD800 + "b";
				if (!text.equals(nul) && !text.equals(surrogate) && !id.equals(nul)) {
					problems.add(entry.getKey() + " was stored altered: " + stored);
				}
			}
			else {
				problems.add(entry.getKey() + " answered " + status + " " + body);
			}
		}
		assertThat(problems).as("inputs neither refused (400) nor stored intact").isEmpty();
	}

	@Test
	void aBodyThatIsNotOneJsonObjectIsRefusedAndNothingIsStored() {
		for (String body : List.of("[" + message("arr", "a") + "]", "\"events\"", "42", "null", "true", " ")) {
			String message = error(push(this.http, "not-object", body), 400, "INVALID_PAYLOAD");
			assertThat(message).as(body).containsAnyOf("JSON object", "empty", "not valid JSON");
		}
		String valid = events(message("t-1", "hi"));
		error(push(this.http, "not-object", valid + valid), 400, "INVALID_PAYLOAD");
		error(push(this.http, "not-object", valid + " trailing"), 400, "INVALID_PAYLOAD");
		error(push(this.http, "not-object", valid + ","), 400, "INVALID_PAYLOAD");
		error(push(this.http, "not-object", valid + "]"), 400, "INVALID_PAYLOAD");
		assertNothingStored(this.http, "not-object");
	}

	@Test
	void duplicateKeysAreRefusedAndNothingIsStored() {
		String events = "[" + message("d-1", "hi") + "]";
		String twice = error(push(this.http, "duplicates", "{\"events\":" + events + ",\"events\":" + events + "}"), 400,
				"INVALID_PAYLOAD");
		assertThat(twice).containsIgnoringCase("duplicate");
		String inPayload = error(push(this.http, "duplicates", "{\"events\":[{\"type\":\"message.sent\",\"payload\":"
				+ "{\"text\":\"a\",\"text\":\"b\",\"author\":\"ann\"}}]}"), 400, "INVALID_PAYLOAD");
		assertThat(inPayload).containsIgnoringCase("duplicate");
		error(push(this.http, "duplicates", "{\"events\":[{\"type\":\"message.sent\",\"type\":\"message.sent\","
				+ "\"payload\":{\"text\":\"a\",\"author\":\"ann\"}}]}"), 400, "INVALID_PAYLOAD");
		assertNothingStored(this.http, "duplicates");
	}

	// --- ids

	@Test
	void idsShapedLikeAUuidV5AreReservedAndNothingIsStored() {
		for (String reserved : List.of("6fa459ea-ee8a-5ca4-894e-db77e160355e", "6FA459EA-EE8A-5CA4-B94E-DB77E160355E")) {
			String message = error(push(this.http, "reserved", events(message("fine-1", "a"), message(reserved, "b"))),
					400, "INVALID_PAYLOAD");
			assertThat(message).contains("events[1].id");
		}
		assertNothingStored(this.http, "reserved");
		JsonNode v4 = ok(push(this.http, "reserved", events(message("6fa459ea-ee8a-4ca4-894e-db77e160355e", "v4"))));
		assertThat(indexes(v4)).containsExactly(1L);
	}

	@Test
	void idsMustBeOneTo256Characters() {
		String tooLong = error(push(this.http, "long-id", events(message("i".repeat(257), "a"))), 400, "INVALID_PAYLOAD");
		assertThat(tooLong).contains("events[0].id");
		String empty = error(push(this.http, "long-id", events(message("", "a"))), 400, "INVALID_PAYLOAD");
		assertThat(empty).contains("events[0].id");
		String notString = error(push(this.http, "long-id",
				"{\"events\":[{\"type\":\"message.sent\",\"id\":7,\"payload\":{\"text\":\"a\",\"author\":\"ann\"}}]}"), 400,
				"INVALID_PAYLOAD");
		assertThat(notString).contains("events[0].id");
		assertNothingStored(this.http, "long-id");
		JsonNode longest = ok(push(this.http, "long-id", events(message("i".repeat(256), "a"))));
		assertThat(longest.get("events").get(0).get("id").asString()).hasSize(256);
	}

	@Test
	void badSessionIdsAreRefusedNeverFailAndStoreNothing() {
		String body = events(message("s-1", "hi"));
		// encoded by the client as one path segment: a%2Fb, a%20b, %C3%BC, …
		for (String session : List.of("a/b", "a b", "ü", "<x>", "a\"b", "a%b", "a?b", "a#b", "x".repeat(257),
				"y".repeat(1000))) {
			int status = push(this.http, session, body).expectBody().returnResult().getStatus().value();
			assertThat(status).as("session id '%s'", session).isIn(400, 404);
		}
		String message = error(push(this.http, "a b", body), 400, "INVALID_PAYLOAD");
		assertThat(message).contains("session id");
		error(push(this.http, "x".repeat(257), body), 400, "INVALID_PAYLOAD");
		// a raw slash makes another path, which no route has
		int raw = this.http.post().uri("/a2/chat/sessions/a/b/events").contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body).exchange().expectBody().returnResult().getStatus().value();
		assertThat(raw).isIn(400, 404);
		// a raw ';' is a bad character too, not the start of matrix variables that leave the id "semi"
		int semicolon = this.http.post().uri("/a2/chat/sessions/semi;colon/events").contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body).exchange().expectBody().returnResult().getStatus().value();
		assertThat(semicolon).as("session id 'semi;colon' sent raw").isIn(400, 404);
		for (String part : List.of("a", "b", "semi", "x".repeat(256), "y".repeat(256))) {
			assertNothingStored(this.http, part);
		}
		JsonNode longest = ok(push(this.http, "z".repeat(256), body));
		assertThat(indexes(longest)).containsExactly(1L);
	}

	@Test
	void aBodyNotSentAsJsonIsRefusedAndNothingIsStored() throws IOException {
		// what a page of another site sends with the user's cookies and no CORS preflight: text, a form, no type
		String push = events(message("typed-1", "from another site"));
		String presence = "{\"participant\":\"ann\",\"values\":{\"typing\":true}}";
		for (MediaType type : List.of(MediaType.TEXT_PLAIN, MediaType.APPLICATION_FORM_URLENCODED,
				MediaType.MULTIPART_FORM_DATA, MediaType.APPLICATION_OCTET_STREAM)) {
			String message = error(this.http.post().uri("/a2/chat/sessions/typed/events").contentType(type)
				.bodyValue(push.getBytes(StandardCharsets.UTF_8)).exchange(), 400, "INVALID_PAYLOAD");
			assertThat(message).as("%s", type).contains("Content-Type").contains("application/json");
			error(this.http.put().uri("/a2/chat/sessions/typed/presence").contentType(type)
				.bodyValue(presence.getBytes(StandardCharsets.UTF_8)).exchange(), 400, "INVALID_PAYLOAD");
		}
		String untyped = "POST /a2/chat/sessions/typed/events HTTP/1.1\r\nHost: a2\r\nContent-Length: "
				+ push.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + push;
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(60_000);
			socket.getOutputStream().write(untyped.getBytes(StandardCharsets.UTF_8));
			socket.getOutputStream().flush();
			assertThat(rawStatusLine(socket.getInputStream())).contains(" 400 ");
		}
		// a type that does not parse was a failure of the route's, answered 500 with an ERROR in the log
		String unparsable = "POST /a2/chat/sessions/typed/events HTTP/1.1\r\nHost: a2\r\nContent-Type: application/\r\n"
				+ "Content-Length: " + push.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + push;
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(60_000);
			socket.getOutputStream().write(unparsable.getBytes(StandardCharsets.UTF_8));
			socket.getOutputStream().flush();
			assertThat(rawStatusLine(socket.getInputStream())).contains(" 400 ");
		}
		assertNothingStored(this.http, "typed");
		assertThat(this.http.get().uri("/a2/chat/sessions/typed/presence").exchange().expectBody(String.class)
			.returnResult().getResponseBody()).isEqualTo("{\"participants\":{}}");
		// JSON by any of its names is taken
		ok(this.http.post().uri("/a2/chat/sessions/typed/events").contentType(MediaType.parseMediaType("application/json;charset=UTF-8"))
			.bodyValue(events(message("typed-2", "hi"))).exchange());
		ok(this.http.post().uri("/a2/chat/sessions/typed/events").contentType(MediaType.parseMediaType("application/vnd.chat+json"))
			.bodyValue(events(message("typed-3", "hi"))).exchange());
		assertThat(indexes(history(this.http, "typed", ""))).containsExactly(1L, 2L);
	}

	@Test
	void aJsonBodyInACharsetOtherThanUtf8IsRefusedRatherThanStoredGarbled() throws Exception {
		// "café" in ISO-8859-1 is not UTF-8: read as UTF-8 it was stored as "caf\uFFFD"
		byte[] latin1 = events(message("latin-1", "café")).getBytes(StandardCharsets.ISO_8859_1);
		for (String type : List.of("application/json;charset=ISO-8859-1", "application/json; charset=\"windows-1252\"")) {
			String message = error(this.http.post().uri("/a2/chat/sessions/latin/events").header(HttpHeaders.CONTENT_TYPE, type)
				.bodyValue(latin1).exchange(), 400, "INVALID_PAYLOAD");
			assertThat(message).as(type).contains("UTF-8").contains("charset=");
			error(this.http.put().uri("/a2/chat/sessions/latin/presence").header(HttpHeaders.CONTENT_TYPE, type)
				.bodyValue("{\"participant\":\"ann\",\"values\":{\"typing\":true}}".getBytes(StandardCharsets.ISO_8859_1))
				.exchange(), 400, "INVALID_PAYLOAD");
		}
		// a charset no one knows (which Spring's own client refuses to send)
		HttpResponse<String> unknown = java.net.http.HttpClient.newHttpClient().send(HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/a2/chat/sessions/latin/events"))
			.header(HttpHeaders.CONTENT_TYPE, "application/json;charset=no-such-charset")
			.POST(HttpRequest.BodyPublishers.ofByteArray(latin1)).build(), HttpResponse.BodyHandlers.ofString());
		assertThat(unknown.statusCode()).isEqualTo(400);
		assertThat(unknown.body()).contains("INVALID_PAYLOAD").contains("UTF-8").contains("no-such-charset");
		assertNothingStored(this.http, "latin");
		// UTF-8 by another of its names, quoted, or ASCII (its first half) is taken
		List<String> utf8 = List.of("application/json;charset=utf8", "application/json;charset=\"UTF-8\"",
				"application/json;charset=US-ASCII");
		for (int i = 0; i < utf8.size(); i++) {
			ok(this.http.post().uri("/a2/chat/sessions/latin/events").contentType(MediaType.parseMediaType(utf8.get(i)))
				.bodyValue(events(message("utf-" + i, "plain")).getBytes(StandardCharsets.UTF_8)).exchange());
		}
		assertThat(indexes(history(this.http, "latin", ""))).containsExactly(1L, 2L, 3L);
	}

	@Test
	void refusedRequestsLeaveTheirKeepAliveConnectionServingTheNext() throws IOException {
		String body = events(message("k-1", "hi"));
		String refusedPush = rawPost("/a2/chat/sessions/" + "x".repeat(257) + "/events", body);
		String refusedRead = "GET /a2/chat/sessions/" + "x".repeat(257) + "/events HTTP/1.1\r\nHost: a2\r\n\r\n";
		String semicolon = rawPost("/a2/chat/sessions/semi;colon/events", body);
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(60_000);
			OutputStream out = socket.getOutputStream();
			InputStream in = socket.getInputStream();
			for (int round = 1; round <= 3; round++) {
				// refused before their bodies are read, sent back to back on one connection
				out.write((refusedPush + refusedRead + semicolon).getBytes(StandardCharsets.UTF_8));
				out.flush();
				for (int answer = 0; answer < 3; answer++) {
					assertThat(rawStatusLine(in)).as("round %d, answer %d", round, answer).contains(" 400 ");
				}
				String fine = events(message("k-" + round, "fine"));
				out.write(rawPost("/a2/chat/sessions/keep-alive/events", fine).getBytes(StandardCharsets.UTF_8));
				out.flush();
				assertThat(rawStatusLine(in)).as("round %d, the next request", round).contains(" 200 ");
			}
		}
		assertThat(history(this.http, "keep-alive", "").get("events")).hasSize(3);
	}

	private static String rawPost(String path, String body) {
		return "POST " + path + " HTTP/1.1\r\nHost: a2\r\nContent-Type: application/json\r\nContent-Length: "
				+ body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
	}

	/** Reads one answer with a Content-Length body off the connection and returns its status line. */
	private static String rawStatusLine(InputStream in) throws IOException {
		ByteArrayOutputStream head = new ByteArrayOutputStream();
		while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
			int next = in.read();
			if (next < 0) {
				throw new EOFException("the server closed the connection after " + head);
			}
			head.write(next);
		}
		String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
		for (String line : lines) {
			if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
				in.readNBytes(Integer.parseInt(line.substring(15).trim()));
			}
		}
		return lines[0];
	}

	// --- the socket

	@Test
	void badFramesAnswerAnErrorAndTheSocketStaysOpen() {
		String deep = "{\"type\":\"push\",\"session\":\"ws-bad\",\"events\":" + "[".repeat(10_000) + "]".repeat(10_000) + "}";
		List<Function<WebSocketSession, WebSocketMessage>> bad = new ArrayList<>(List.of(text("not json"), text(""),
				text("[]"), text("\"ping\""), text("{}"), text("{\"type\":\"dance\"}"), text("{\"type\":7}"),
				text("{\"type\":null}"), text("{\"type\":\"ping\",\"type\":\"ping\"}"), text("{\"type\":\"ping\"} trailing"),
				text("{\"type\":\"ping\"}{\"type\":\"ping\"}"), text("{\"type\":\"subscribe\"}"),
				text("{\"type\":\"subscribe\",\"session\":\"a/b\"}"), text("{\"type\":\"subscribe\",\"session\":7}"),
				text("{\"type\":\"subscribe\",\"session\":\"ws-bad\",\"after\":-1}"),
				text("{\"type\":\"subscribe\",\"session\":\"ws-bad\",\"after\":\"one\"}"),
				text("{\"type\":\"unsubscribe\"}"), text("{\"type\":\"push\",\"ref\":\"r1\",\"session\":\"ws-bad\"}"),
				text("{\"type\":\"push\",\"ref\":\"r2\",\"session\":\"ws-bad\",\"events\":[]}"),
				text("{\"type\":\"push\",\"ref\":\"r3\",\"session\":\"ws-bad\",\"events\":[{\"type\":\"nope\",\"payload\":{}}]}"),
				text("{\"type\":\"push\",\"ref\":\"r4\",\"session\":\"ws-bad\",\"events\":[" + message("6fa459ea-ee8a-5ca4-894e-db77e160355e", "a") + "]}"),
				text(deep), binary(new byte[] { 1, 2, 3 }),
				binary("{\"type\":\"ping\"}".getBytes(StandardCharsets.UTF_8))));
		try (RawSocket socket = new RawSocket(uri(), new HttpHeaders())) {
			for (int i = 0; i < bad.size(); i++) {
				List<JsonNode> answers = socket.exchange(bad.get(i), 2);
				assertThat(answers.get(0).path("type").asString()).as("frame %d: %s", i, answers).isEqualTo("error");
				assertThat(answers.get(0).path("error").path("code").asString()).as("frame %d: %s", i, answers)
					.isEqualTo("INVALID_PAYLOAD");
				assertThat(answers.get(0).path("error").path("message").asString()).as("frame %d", i).isNotBlank();
				assertThat(answers.get(1).path("type").asString()).as("frame %d: %s", i, answers).isEqualTo("pong");
			}
			List<JsonNode> tooLarge = socket.exchange(text("{\"type\":\"ping\",\"pad\":\"" + "p".repeat(LIMIT + 10) + "\"}"), 2);
			assertThat(tooLarge.get(0).path("error").path("code").asString()).as("%s", tooLarge).isEqualTo("PAYLOAD_TOO_LARGE");
			assertThat(tooLarge.get(1).path("type").asString()).isEqualTo("pong");
			List<JsonNode> refs = socket.exchange(
					text("{\"type\":\"push\",\"ref\":\"r5\",\"session\":\"ws-bad\",\"events\":[{\"type\":\"message.sent\","
							+ "\"payload\":{\"text\":\"\",\"author\":\"ann\"}}]}"), 2);
			assertThat(refs.get(0).path("ref").asString()).isEqualTo("r5");
			assertThat(refs.get(0).path("error").path("message").asString()).contains("events[0].payload.text");
		}
		assertNothingStored(this.http, "ws-bad");
		assertNothingStored(this.http, "a");
	}

	@Test
	void aCrossOriginHandshakeIsRefusedWhileTheSameOriginAndNoOriginAreServed() {
		for (String foreign : List.of("http://evil.example", "http://localhost:" + (this.port + 1),
				"https://localhost:" + this.port, "null")) {
			HttpHeaders headers = new HttpHeaders();
			headers.setOrigin(foreign);
			assertThatThrownBy(() -> new ReactorNettyWebSocketClient(HttpClient.newConnection())
				.execute(uri(), headers, (session) -> session.send(Mono.just(session.textMessage("{\"type\":\"ping\"}"))))
				.block(Duration.ofSeconds(30))).as(foreign).hasMessageContaining("403");
		}

		HttpHeaders same = new HttpHeaders();
		same.setOrigin("http://localhost:" + this.port);
		assertThat(pingPong(same)).isEqualTo("pong");
		assertThat(pingPong(new HttpHeaders())).isEqualTo("pong");
	}

	@Test
	void aClientThatGoesAwayMidBodyIsNoFailureOfTheServers(CapturedOutput output) throws IOException {
		String cut = "POST /a2/chat/sessions/cut/events HTTP/1.1\r\nHost: a2\r\nContent-Type: application/json\r\n"
				+ "Content-Length: 1000\r\n\r\n{\"events\":[{\"type\":\"message.sent\",";
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.getOutputStream().write(cut.getBytes(StandardCharsets.UTF_8));
			socket.getOutputStream().flush();
		}
		// told at DEBUG (this test's level for WebErrors); it was an ERROR with a stack trace for every such client
		await().atMost(Duration.ofSeconds(30)).until(() -> output.getAll().contains("A client went away before its request")
				|| output.getAll().contains("failed unexpectedly"));
		assertThat(output.getAll()).doesNotContain("failed unexpectedly").contains("A client went away before its request");
		assertNothingStored(this.http, "cut");
	}

	@Test
	void aCrossOriginHandshakeIsAnsweredForbiddenWithA2sErrorBody() {
		String message = error(this.http.get().uri("/a2/chat/socket").header("Origin", "http://evil.example")
			.header("Upgrade", "websocket").header("Connection", "Upgrade").header("Sec-WebSocket-Version", "13")
			.header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==").exchange(), 403, "FORBIDDEN");
		assertThat(message).contains("http://evil.example").contains("a2.web.allowed-origins");
	}

	@Test
	void aGetOfTheSocketWithoutAnUpgradeIsAnsweredWithA2sErrorBody() {
		// a proxy that dropped the Upgrade header, a curl: told what the URL is, not the server's error page
		String message = error(this.http.get().uri("/a2/chat/socket").header("Authorization", "Bearer secret-token")
			.header("Cookie", "SESSION=secret-cookie").exchange(), 400, "INVALID_PAYLOAD");
		assertThat(message).contains("/a2/chat/socket").contains("WebSocket").contains("no Upgrade: websocket header");
		// the request's credentials are not told back: a page's script could read an HttpOnly cookie so
		assertThat(message).doesNotContain("secret-token").doesNotContain("secret-cookie");
		String noKey = error(this.http.get().uri("/a2/chat/socket").header("Upgrade", "websocket")
			.header("Connection", "Upgrade").header("Sec-WebSocket-Version", "13").header("Cookie", "SESSION=secret-cookie")
			.exchange(), 400, "INVALID_PAYLOAD");
		assertThat(noKey).contains("no Sec-WebSocket-Key").doesNotContain("secret-cookie");
		String post = error(this.http.post().uri("/a2/chat/socket").exchange(), 405, "METHOD_NOT_ALLOWED");
		assertThat(post).contains("GET");
	}

	private String pingPong(HttpHeaders headers) {
		try (RawSocket socket = new RawSocket(uri(), headers)) {
			return socket.exchange(text("{\"type\":\"ping\"}"), 1).get(0).path("type").asString();
		}
	}

	// --- helpers

	private URI uri() {
		return URI.create("ws://localhost:" + this.port + "/a2/chat/socket");
	}

	private static String withText(String text) {
		return "{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"" + text + "\",\"author\":\"ann\"}}]}";
	}

	/** The bytes in 8 KiB buffers of a Flux, so the client sends them chunked, without a Content-Length. */
	private static Flux<DataBuffer> chunked(byte[] body) {
		int chunk = 8 * 1024;
		return Flux.range(0, (body.length + chunk - 1) / chunk).map((i) -> {
			int from = i * chunk;
			byte[] part = java.util.Arrays.copyOfRange(body, from, Math.min(body.length, from + chunk));
			return DefaultDataBufferFactory.sharedInstance.wrap(part);
		});
	}

	private static Function<WebSocketSession, WebSocketMessage> text(String frame) {
		return (session) -> session.textMessage(frame);
	}

	private static Function<WebSocketSession, WebSocketMessage> binary(byte[] frame) {
		return (session) -> session.binaryMessage((factory) -> factory.wrap(frame));
	}

	/** A real WebSocket client that sends any frame, text or binary, and keeps what it receives but server pings. */
	private static final class RawSocket implements AutoCloseable {

		private final List<JsonNode> received = new CopyOnWriteArrayList<>();

		private final Sinks.Many<Function<WebSocketSession, WebSocketMessage>> outgoing = Sinks.many()
			.unicast()
			.onBackpressureBuffer();

		private final Disposable connection;

		RawSocket(URI uri, HttpHeaders headers) {
			this.connection = new ReactorNettyWebSocketClient(HttpClient.newConnection()).execute(uri, headers, (session) -> session
				.send(this.outgoing.asFlux().map((frame) -> frame.apply(session)))
				.and(session.receive()
					.map((message) -> A2RoutesIntegrationTests.json.readTree(message.getPayloadAsText()))
					.filter((frame) -> !"ping".equals(frame.path("type").asString()))
					.doOnNext(this.received::add)
					.then()))
				.subscribe();
		}

		/** Sends a frame and a ping, and answers the next {@code count} frames received. */
		List<JsonNode> exchange(Function<WebSocketSession, WebSocketMessage> frame, int count) {
			int mark = this.received.size();
			this.outgoing.tryEmitNext(frame);
			if (count > 1) {
				this.outgoing.tryEmitNext(text("{\"type\":\"ping\"}"));
			}
			try {
				await().atMost(Duration.ofSeconds(30)).until(() -> this.received.size() >= mark + count);
			}
			catch (ConditionTimeoutException ex) {
				throw new AssertionError("no answer came; the socket received " + this.received, ex);
			}
			return new ArrayList<>(this.received.subList(mark, mark + count));
		}

		@Override
		public void close() {
			this.outgoing.tryEmitComplete();
			this.connection.dispose();
		}

	}

}
