package dev.a2.web;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.a2.A2Exception;
import dev.a2.A2Observations;
import dev.a2.A2Server;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.PresenceWrite;
import dev.a2.Session;
import dev.a2.SessionState;
import dev.a2.store.StoredPage;
import dev.a2.wire.Wire;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpOutputMessage;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/** Push, history, state, presence and clear of one session per request. */
final class SessionHandlers {

	private final A2Server server;

	private final Wire wire;

	private final Access access;

	private final Scheduler scheduler;

	private final ObservationRegistry observations;

	SessionHandlers(A2Server server, Wire wire, Access access, Scheduler scheduler, ObservationRegistry observations) {
		this.server = server;
		this.wire = wire;
		this.access = access;
		this.scheduler = scheduler;
		this.observations = observations;
	}

	Mono<ServerResponse> push(ServerRequest request) {
		String contract = contract(request);
		String id = sessionId(request);
		return body(request).flatMap((body) -> json(request, (caller) -> push(caller, contract, id, body)));
	}

	/**
	 * Authorizes and stores a push of {@code body} to the session, on the calling thread, and answers the
	 * stored events' JSON: the work of the push route, and of {@link ServletPush} on a servlet's thread.
	 */
	String push(@Nullable Principal caller, String contract, String id, byte[] body) {
		JsonNode envelope = this.wire.readObject(body, "the body");
		Wire.onlyMembers(envelope, "the body", Wire.PUSH_MEMBERS);
		List<NewEvent> events = this.wire.readEvents(envelope);
		PresenceWrite presence = PresenceWrites.read(envelope.get("presence"), caller, "presence.");
		Session session = this.access.open(caller, A2Access.push(contract, id, events, presence));
		List<Event> stored = Observation.createNotStarted(A2Observations.PUSH, this.observations)
			.lowCardinalityKeyValue(A2Observations.CONTRACT, session.contract().name())
			.highCardinalityKeyValue(A2Observations.SESSION, session.id())
			.observe(() -> session.append(events, presence));
		return this.wire.pushed(stored);
	}

	Mono<ServerResponse> history(ServerRequest request) {
		String contract = contract(request);
		String id = sessionId(request);
		long after = longParam(request, "after", 0);
		long limit = queryParam(request, "limit").map((value) -> wholeNumber(value, "limit", 1, Session.MAX_HISTORY_LIMIT))
			.orElse(100L);
		return json(request, (caller) -> {
			Session session = this.access.open(caller, A2Access.of(A2Permission.READ, contract, id));
			StoredPage page = this.server.eventStore().history(session.contract().name(), session.id(), after, (int) limit);
			return this.wire.page(page.events(), page.head());
		});
	}

	Mono<ServerResponse> state(ServerRequest request) {
		String contract = contract(request);
		String id = sessionId(request);
		String reducer = request.pathVariable("reducer");
		return json(request, (caller) -> {
			Session session = this.access.open(caller, A2Access.of(A2Permission.READ, contract, id));
			session.contract().reducer(reducer);
			SessionState<?> state = session.state(reducer);
			return this.wire.state(state.index(), state.state());
		});
	}

	Mono<ServerResponse> presence(ServerRequest request) {
		String contract = contract(request);
		String id = sessionId(request);
		return json(request, (caller) -> this.wire
			.value(this.access.open(caller, A2Access.of(A2Permission.READ, contract, id)).presence()));
	}

	Mono<ServerResponse> writePresence(ServerRequest request) {
		String contract = contract(request);
		String id = sessionId(request);
		return body(request).flatMap((body) -> json(request, (caller) -> {
			PresenceWrite write = PresenceWrites.read(this.wire.readObject(body, "the body"), caller, "");
			Session session = this.access.open(caller, A2Access.presence(contract, id, write));
			// now: the server's clock, on which the client stamps the at of its next writes
			return this.wire.value(Map.of("patches", session.presence(write), "now", this.server.clock().millis()));
		}));
	}

	Mono<ServerResponse> clear(ServerRequest request) {
		String contract = contract(request);
		String id = sessionId(request);
		long expected = longParam(request, "ifLastIndex", -1);
		return json(request, (caller) -> {
			Session session = this.access.open(caller, A2Access.of(A2Permission.CLEAR, contract, id));
			long marker = (expected >= 0) ? session.clear(expected) : session.clear();
			return this.wire.cleared(marker);
		});
	}

	/**
	 * The contract of the path, as sent: whether it exists is told only to a caller the authorizer lets in.
	 */
	static String contract(ServerRequest request) {
		return request.pathVariable("contract");
	}

	static String sessionId(ServerRequest request) {
		return request.pathVariable("session");
	}

	/** Runs {@code work} (which authorizes first) on a store thread, and answers its JSON. */
	private Mono<ServerResponse> json(ServerRequest request, Work work) {
		return Mono.deferContextual((context) -> {
			Observation observed = RequestObservation.of(context);
			return request.principal()
				.map(Optional::of)
				.defaultIfEmpty(Optional.empty())
				.flatMap((caller) -> Mono
					.fromCallable(() -> RequestObservation.within(observed, () -> work.run(Access.caller(caller.orElse(null)))))
					.subscribeOn(this.scheduler));
		}).flatMap((json) -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).body(utf8(json)));
	}

	/** The JSON as it is: no codec to look up for a body that is already written. */
	static BodyInserter<String, ReactiveHttpOutputMessage> utf8(String json) {
		return (message, context) -> message
			.writeWith(Mono.just(message.bufferFactory().wrap(json.getBytes(StandardCharsets.UTF_8))));
	}

	/**
	 * The body's bytes, refused past the limit before it is all read, and refused unless it is sent as
	 * JSON: a page of another site can send {@code text/plain}, a form or an untyped body with the
	 * user's cookies and no CORS preflight, where {@code application/json} needs one the browser
	 * refuses; so such a body never pushes, even where the application's CSRF protection does not
	 * cover A2's routes.
	 */
	private Mono<byte[]> body(ServerRequest request) {
		try {
			checkBody(request.headers().firstHeader(HttpHeaders.CONTENT_TYPE), request.headers().contentLength().orElse(-1));
		}
		catch (A2Exception ex) {
			return Mono.error(ex);
		}
		return DataBufferUtils.join(request.bodyToFlux(DataBuffer.class), this.wire.limits().maxBytes())
			.map((buffer) -> {
				byte[] bytes = new byte[buffer.readableByteCount()];
				buffer.read(bytes);
				DataBufferUtils.release(buffer);
				return bytes;
			})
			.defaultIfEmpty(new byte[0]);
	}

	/**
	 * Refuses a body not sent as JSON, or one its {@code Content-Length} ({@code -1}: none) puts over the
	 * push limit, before any of it is read.
	 */
	void checkBody(@Nullable String contentType, long length) {
		MediaType type;
		try {
			type = (contentType != null) ? MediaType.parseMediaType(contentType) : null;
		}
		catch (InvalidMediaTypeException ex) {
			// a type that does not parse (or names a charset Java does not know) is the caller's error
			throw new A2Exception(ErrorCode.INVALID_PAYLOAD, "the body must be sent as Content-Type: "
					+ "application/json in UTF-8, was '" + contentType + "' (" + ex.getMessage() + ")");
		}
		if (!isJson(type)) {
			throw new A2Exception(ErrorCode.INVALID_PAYLOAD, "the body must be sent as Content-Type: "
					+ "application/json, was " + ((contentType != null) ? "'" + contentType + "'" : "none"));
		}
		String charset = type.getParameter("charset");
		if (charset != null && !isUtf8(charset)) {
			// JSON is UTF-8 (RFC 8259) and A2 reads it so; a body in another charset would be stored garbled
			throw new A2Exception(ErrorCode.INVALID_PAYLOAD, "the body must be JSON in UTF-8, was sent with charset="
					+ charset);
		}
		if (length > this.wire.limits().maxBytes()) {
			throw this.wire.tooLarge("the body", length);
		}
	}

	/** UTF-8 by any of its names, or US-ASCII, which is UTF-8's first half; quotes allowed ({@code "utf-8"}). */
	private static boolean isUtf8(String charset) {
		String name = (charset.length() > 1 && charset.startsWith("\"") && charset.endsWith("\""))
				? charset.substring(1, charset.length() - 1) : charset;
		try {
			Charset named = Charset.forName(name);
			return named.equals(StandardCharsets.UTF_8) || named.equals(StandardCharsets.US_ASCII);
		}
		catch (IllegalArgumentException ex) {
			// a name Java does not know is no UTF-8
			return false;
		}
	}

	/** {@code application/json} or a JSON type such as {@code application/problem+json}, with any parameters. */
	private static boolean isJson(@Nullable MediaType type) {
		return type != null && "application".equalsIgnoreCase(type.getType())
				&& ("json".equalsIgnoreCase(type.getSubtype()) || "json".equalsIgnoreCase(type.getSubtypeSuffix()));
	}

	static long longParam(ServerRequest request, String name, long absent) {
		Optional<String> value = queryParam(request, name);
		if (value.isEmpty()) {
			return absent;
		}
		return wholeNumber(value.get(), name);
	}

	/**
	 * A query parameter given once, or none. Given twice ({@code ?after=1&after=2}) it is refused: which
	 * one the caller meant is not A2's to guess, and taking the first read past the second silently.
	 */
	static Optional<String> queryParam(ServerRequest request, String name) {
		List<String> values = request.queryParams().getOrDefault(name, List.of());
		if (values.size() > 1) {
			throw new A2Exception(ErrorCode.INVALID_PAYLOAD, name + " is given " + values.size() + " times; give it once");
		}
		return values.isEmpty() ? Optional.empty() : Optional.ofNullable(values.get(0));
	}

	static long wholeNumber(String value, String name) {
		return wholeNumber(value, name, 0, Long.MAX_VALUE);
	}

	/**
	 * A whole number from {@code min} to {@code max}, in ASCII digits only ({@code Long.parseLong} takes a
	 * sign and the digits of every script); a refusal states those bounds, whatever was wrong.
	 */
	static long wholeNumber(String value, String name, long min, long max) {
		if (!value.isEmpty() && value.chars().allMatch((c) -> c >= '0' && c <= '9')) {
			try {
				long number = Long.parseLong(value);
				if (number >= min && number <= max) {
					return number;
				}
			}
			catch (NumberFormatException ex) {
				// too large: answered below
			}
		}
		String bounds = (max == Long.MAX_VALUE) ? min + " or more" : min + "-" + max;
		throw new A2Exception(ErrorCode.INVALID_PAYLOAD, name + " must be a whole number of " + bounds + ", was '"
				+ (value.length() > 40 ? value.substring(0, 40) + "…" : value) + "'");
	}

	@FunctionalInterface
	interface Work {

		String run(@Nullable Principal caller) throws Exception;

	}

}
