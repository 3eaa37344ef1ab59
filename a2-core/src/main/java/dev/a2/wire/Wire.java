package dev.a2.wire;

import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Pattern;

import dev.a2.A2Exception;
import dev.a2.Cause;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.store.StoredEvent;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes and reads A2's JSON. Events read from the store are written with their stored payload text
 * as it is, so a stream never binds and re-serializes payloads; everything else (state, presence
 * values, the events a push answers) is written with the application's mapper.
 */
public final class Wire {

	/** A Java class's qualified name: its package goes, its simple name (group 1) stays. */
	private static final Pattern QUALIFIED_NAME = Pattern.compile("\\b(?:[a-z_$][\\w$]*\\.)+([A-Z][\\w$]*)");

	/** Jackson's pointer to the setting a limit comes from, or to the setting that would coerce a value. */
	private static final Pattern SERVER_ADVICE = Pattern.compile(",? from `[^`]*`| \\(but could if [^)]*\\)| \\(set [^)]* to allow\\)");

	/** Where an unclosed array or object began, which Jackson gives as a location it has not kept ("REDACTED"). */
	private static final Pattern START_MARKER = Pattern.compile(" \\(start marker at \\[Source: .*?\\]\\)");

	/** The members of a pushed event. */
	private static final Set<String> EVENT_MEMBERS = Set.of("type", "payload", "id");

	/** The members of a push's body (over HTTP). */
	public static final Set<String> PUSH_MEMBERS = Set.of("events", "presence");

	private final JsonMapper mapper;

	private final JsonMapper reader;

	private final WireLimits limits;

	/**
	 * @param mapper the application's mapper, for payloads, state and presence values
	 * @param limits what a body or frame may hold
	 */
	public Wire(JsonMapper mapper, WireLimits limits) {
		this.mapper = mapper;
		this.limits = limits;
		StreamReadConstraints constraints = StreamReadConstraints.builder()
			.maxNestingDepth(limits.maxDepth())
			.maxStringLength(limits.maxStringLength())
			.maxNameLength(Math.min(limits.maxStringLength(), 50_000))
			.maxDocumentLength(limits.maxBytes())
			.build();
		this.reader = JsonMapper.builder(JsonFactory.builder().streamReadConstraints(constraints).build())
			.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
			.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
			.build();
	}

	public WireLimits limits() {
		return this.limits;
	}

	public JsonMapper mapper() {
		return this.mapper;
	}

	// --- reading

	/**
	 * Reads a body or frame as a JSON object.
	 * @throws A2Exception {@code PAYLOAD_TOO_LARGE} over the byte limit, {@code INVALID_PAYLOAD} when it is
	 * not one JSON object within the limits (saying what is wrong)
	 */
	public JsonNode readObject(byte[] json, String what) {
		if (json.length > this.limits.maxBytes()) {
			throw tooLarge(what, json.length);
		}
		if (json.length == 0) {
			throw invalid(what + " is empty; expected a JSON object");
		}
		JsonNode node;
		try {
			// ASCII (most bodies) is valid UTF-8 as it is; anything else is decoded strictly first:
			// Jackson's own decoding lets overlong forms through (C0 AF reads as '/')
			node = isAscii(json) ? this.reader.readTree(json) : this.reader.readTree(strictUtf8(json, what));
		}
		catch (StreamConstraintsException ex) {
			throw overLimit(what, ex);
		}
		catch (JacksonException ex) {
			throw invalid(what + " is not valid JSON: " + jacksonMessage(ex, "it cannot be read"));
		}
		if (node == null || !node.isObject()) {
			throw invalid(what + " must be a JSON object");
		}
		return node;
	}

	/**
	 * A body that is valid JSON but holds more than a limit allows: which limit, and where it is set. It
	 * was told "not valid JSON: String value length (104054) exceeds the maximum allowed (65536)", the
	 * length being only as far as Jackson had read.
	 */
	private A2Exception overLimit(String what, StreamConstraintsException ex) {
		String message = String.valueOf(ex.getOriginalMessage());
		if (message.startsWith("String value length") || message.startsWith("Name length")) {
			return invalid(what + " holds a string longer than " + this.limits.maxStringLength()
					+ " characters, the most a string may have (a2.web.max-string-length)");
		}
		if (message.contains("nesting depth")) {
			return invalid(what + " is nested deeper than " + this.limits.maxDepth()
					+ " levels, the most a body may have (a2.web.max-json-depth)");
		}
		if (message.startsWith("Document length")) {
			return tooLarge(what, this.limits.maxBytes() + 1L);
		}
		return invalid(what + " is over a limit of the server's: " + jacksonMessage(ex, "it cannot be read"));
	}

	private static boolean isAscii(byte[] bytes) {
		for (byte b : bytes) {
			if (b < 0) {
				return false;
			}
		}
		return true;
	}

	private static String strictUtf8(byte[] json, String what) {
		try {
			return StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(ByteBuffer.wrap(json))
				.toString();
		}
		catch (CharacterCodingException ex) {
			throw invalid(what + " is not valid UTF-8");
		}
	}

	public A2Exception tooLarge(String what, long bytes) {
		return new A2Exception(ErrorCode.PAYLOAD_TOO_LARGE,
				what + " has " + bytes + " bytes or more; at most " + this.limits.maxBytes() + " are accepted");
	}

	/** The events of a push body or frame: {@code "events":[{"type","payload","id"?}]}. */
	public List<NewEvent> readEvents(JsonNode body) {
		JsonNode events = body.get("events");
		if (events == null || !events.isArray() || events.isEmpty()) {
			throw invalid("events must be a non-empty array of {\"type\",\"payload\",\"id\"?}");
		}
		if (events.size() > this.limits.maxEvents()) {
			throw invalid("events has " + events.size() + " events; one push takes at most " + this.limits.maxEvents());
		}
		List<NewEvent> read = new ArrayList<>(events.size());
		for (int i = 0; i < events.size(); i++) {
			JsonNode event = events.get(i);
			// the events[i] of a message is built only when there is one to send
			if (!event.isObject()) {
				throw invalid("events[" + i + "] must be an object {\"type\",\"payload\",\"id\"?}");
			}
			onlyMembers(event, "events[" + i + "]", EVENT_MEMBERS);
			JsonNode type = event.get("type");
			if (type == null || !type.isString() || type.asString().isEmpty()) {
				throw invalid("events[" + i + "].type must be a non-empty string");
			}
			JsonNode id = event.get("id");
			if (id != null && !id.isNull() && !id.isString()) {
				throw invalid("events[" + i + "].id must be a string when present");
			}
			JsonNode payload = event.get("payload");
			read.add(new NewEvent(type.asString(), (payload == null || payload.isNull()) ? null : payload,
					(id == null || id.isNull()) ? null : id.asString()));
		}
		return read;
	}

	/**
	 * Refuses a member {@code object} does not have ({@code INVALID_PAYLOAD} naming it and the members it
	 * has): a misspelt one ({@code "presense"}, an event's {@code "Id"}) would otherwise be passed over in
	 * silence, and what it meant (clear typing, a retry's idempotency) lost.
	 */
	public static void onlyMembers(JsonNode object, String where, Set<String> members) {
		for (String name : object.propertyNames()) {
			if (!members.contains(name)) {
				throw invalid(where + " has no member '" + name + "'; its members are "
						+ String.join(", ", new TreeSet<>(members)));
			}
		}
	}

	/** A non-empty string member, else {@code INVALID_PAYLOAD} naming it. */
	public static String requiredString(JsonNode node, String name, String where) {
		JsonNode value = node.get(name);
		if (value == null || !value.isString() || value.asString().isEmpty()) {
			throw invalid(where + name + " must be a non-empty string");
		}
		return value.asString();
	}

	// --- writing

	/** {@code {"events":[…]}} of events read from the store. */
	public String events(List<StoredEvent> events) {
		return write((json) -> {
			json.writeStartObject();
			json.writeName("events");
			writeStored(json, events);
			json.writeEndObject();
		});
	}

	/** {@code {"events":[…]}} of events a push stored. */
	public String pushed(List<Event> events) {
		return write((json) -> {
			json.writeStartObject();
			json.writeName("events");
			json.writeStartArray();
			for (Event event : events) {
				writeEvent(json, event.index(), event.id(), event.type(), IsoInstants.format(event.createdAt()), event.cause());
				json.writeName("payload");
				json.writePOJO(event.payload());
				json.writeEndObject();
			}
			json.writeEndArray();
			json.writeEndObject();
		});
	}

	/** {@code {"events":[…],"head":H}}: a page of history. */
	public String page(List<StoredEvent> events, long head) {
		return write((json) -> {
			json.writeStartObject();
			json.writeName("events");
			writeStored(json, events);
			json.writeNumberProperty("head", head);
			json.writeEndObject();
		});
	}

	/** {@code {"index":I,"state":…}}. */
	public String state(long index, @Nullable Object state) {
		return write((json) -> {
			json.writeStartObject();
			json.writeNumberProperty("index", index);
			json.writeName("state");
			json.writePOJO(state);
			json.writeEndObject();
		});
	}

	/** {@code {"index":C}}: where the session was cleared. */
	public String cleared(long index) {
		return write((json) -> {
			json.writeStartObject();
			json.writeNumberProperty("index", index);
			json.writeEndObject();
		});
	}

	/** {@code {"error":{"code","message"}}}. */
	public String error(ErrorCode code, String message) {
		return write((json) -> {
			json.writeStartObject();
			json.writeName("error");
			writeError(json, code, message);
			json.writeEndObject();
		});
	}

	/** Any value, with the application's mapper. */
	public String value(@Nullable Object value) {
		return this.mapper.writeValueAsString(value);
	}

	// --- socket frames

	/** {@code {"type":T,"session":S,…}}, the rest written by {@code members}. */
	public String frame(String type, @Nullable String session, Consumer<JsonGenerator> members) {
		return write((json) -> {
			json.writeStartObject();
			json.writeStringProperty("type", type);
			if (session != null) {
				json.writeStringProperty("session", session);
			}
			members.accept(json);
			json.writeEndObject();
		});
	}

	public String eventsFrame(String session, List<StoredEvent> events) {
		return frame("events", session, (json) -> {
			json.writeName("events");
			writeStored(json, events);
		});
	}

	/** The ack of a push: {@code ref} is the push's, echoed as sent (a string, a number …), absent when it had none. */
	public String ackFrame(@Nullable JsonNode ref, List<Event> events) {
		return frame("ack", null, (json) -> {
			writeRef(json, ref);
			json.writeName("events");
			json.writeStartArray();
			for (Event event : events) {
				json.writeStartObject();
				json.writeNumberProperty("index", event.index());
				json.writeStringProperty("id", event.id());
				json.writeEndObject();
			}
			json.writeEndArray();
		});
	}

	/** An error frame; {@code ref} as in {@link #ackFrame}. */
	public String errorFrame(@Nullable JsonNode ref, @Nullable String session, ErrorCode code, String message) {
		return frame("error", session, (json) -> {
			writeRef(json, ref);
			json.writeName("error");
			writeError(json, code, message);
		});
	}

	/**
	 * The error frame of a subscription the server ended itself: {@code "unsubscribed":true} tells it from
	 * an error the subscription outlives (a store fault) and from a refused frame (a presence write).
	 */
	public String unsubscribedFrame(String session, ErrorCode code, String message) {
		return frame("error", session, (json) -> {
			json.writeName("error");
			writeError(json, code, message);
			json.writeBooleanProperty("unsubscribed", true);
		});
	}

	private static void writeRef(JsonGenerator json, @Nullable JsonNode ref) {
		// a client matches the answer to its frame by ref: "42" would not find the 42 it sent
		if (ref != null && !ref.isNull() && !ref.isMissingNode()) {
			json.writeName("ref");
			json.writePOJO(ref);
		}
	}

	private static void writeError(JsonGenerator json, ErrorCode code, String message) {
		json.writeStartObject();
		json.writeStringProperty("code", code.name());
		json.writeStringProperty("message", message);
		json.writeEndObject();
	}

	/** The events as a JSON array, inside a generator already writing. */
	public void writeStored(JsonGenerator json, List<StoredEvent> events) {
		json.writeStartArray();
		for (StoredEvent event : events) {
			writeEvent(json, event.index(), event.id(), event.type(), IsoInstants.format(event.createdAt()), event.cause());
			json.writeName("payload");
			json.writeRawValue(event.payload());
			json.writeEndObject();
		}
		json.writeEndArray();
	}

	/** Opens an event object and writes all but its payload. */
	private static void writeEvent(JsonGenerator json, long index, String id, String type, String createdAt,
			@Nullable Cause cause) {
		json.writeStartObject();
		json.writeNumberProperty("index", index);
		json.writeStringProperty("id", id);
		json.writeStringProperty("type", type);
		json.writeStringProperty("createdAt", createdAt);
		if (cause != null) {
			json.writeName("cause");
			json.writeStartObject();
			json.writeStringProperty("consumer", cause.consumer());
			if (cause.lane() != null) {
				json.writeStringProperty("lane", cause.lane());
			}
			json.writeNumberProperty("index", cause.index());
			json.writeNumberProperty("attempt", cause.attempt());
			json.writeEndObject();
		}
	}

	private String write(Consumer<JsonGenerator> writer) {
		StringWriter out = new StringWriter(256);
		try (JsonGenerator json = this.mapper.createGenerator(out)) {
			writer.accept(json);
		}
		return out.toString();
	}

	private static A2Exception invalid(String message) {
		return new A2Exception(ErrorCode.INVALID_PAYLOAD, message);
	}

	/**
	 * What Jackson said of a value it could not read or write, for the caller: its first line, with
	 * the server's class names shortened to their simple names ({@code `Integer`}, not
	 * {@code `java.lang.Integer`}) and its advice to the server's code left out ("from
	 * {@code `StreamReadConstraints.getMaxStringLength()`}", "(but could if coercion was enabled using
	 * {@code `CoercionConfig`})"), which tell a client nothing it can act on
	 * and tell anyone the server's packages.
	 */
	public static String jacksonMessage(JacksonException ex, String unread) {
		String message = ex.getOriginalMessage();
		if (message == null) {
			return unread;
		}
		int newline = message.indexOf('\n');
		String first = (newline < 0) ? message : message.substring(0, newline);
		String advice = SERVER_ADVICE.matcher(QUALIFIED_NAME.matcher(first).replaceAll("$1")).replaceAll("");
		return START_MARKER.matcher(advice).replaceAll("");
	}

}
