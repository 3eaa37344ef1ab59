package dev.a2;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentHashMap;

import dev.a2.store.EventToStore;
import dev.a2.store.StorableText;
import dev.a2.store.StoredEvent;
import dev.a2.wire.Wire;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Binds payloads to the Java types of a contract (and validates them) on the way in, and back from
 * their stored JSON on the way out.
 */
final class PayloadBinder {

	private final JsonMapper mapper;

	/**
	 * The mapper's reader without its float-to-int coercion: Jackson truncates 19.99 into an int or
	 * long field as 19, and the truncated value would be stored as the event (a client's amount or
	 * quantity changed silently), so a fraction there does not bind.
	 */
	private final ObjectReader payloads;

	private final @Nullable PayloadValidator validator;

	/** {@link #payloads} for each payload type met, made once: made per payload it was about 1% of a push's JVM time (JFR). */
	private final Map<Class<?>, ObjectReader> readers = new ConcurrentHashMap<>();

	PayloadBinder(JsonMapper mapper, @Nullable PayloadValidator validator) {
		this.mapper = mapper;
		this.payloads = mapper.reader().without(DeserializationFeature.ACCEPT_FLOAT_AS_INT);
		this.validator = validator;
	}

	/** A payload bound to its type and written as the JSON to store. */
	record Bound(Object value, String json) {
	}

	/**
	 * Binds and validates; {@code INVALID_PAYLOAD} names {@code where} and the path of the bad field.
	 * @param where how the caller names this payload, such as {@code events[2].payload}
	 */
	Bound bind(Class<?> type, @Nullable Object payload, String where) {
		Object value;
		try {
			value = type.isInstance(payload) ? payload : convert(type, payload);
		}
		catch (JacksonException ex) {
			throw A2Exception.invalid(where + path(ex) + ": " + Wire.jacksonMessage(ex, "cannot be read"));
		}
		if (value == null) {
			throw A2Exception.invalid(where + " is required: expected " + describe(type));
		}
		if (this.validator != null) {
			List<PayloadValidator.Violation> violations = this.validator.validate(value);
			if (!violations.isEmpty()) {
				// every one, in the validator's order: a form shows them all at once, not one per try
				StringJoiner all = new StringJoiner("; ");
				for (PayloadValidator.Violation violation : violations) {
					all.add(where + (violation.path().isEmpty() ? "" : "." + violation.path()) + ": " + violation.message());
				}
				throw A2Exception.invalid(all.toString());
			}
		}
		String json;
		try {
			json = this.mapper.writeValueAsString(value);
		}
		catch (JacksonException ex) {
			// e.g. nesting past the mapper's limit (a value holding itself): the path would be as deep, so
			// the message names only the payload and what Jackson refused
			throw A2Exception.invalid(where + " cannot be written as JSON: " + Wire.jacksonMessage(ex, "cannot be read"));
		}
		if (!StorableText.isStorableJson(json)) {
			throw A2Exception.invalid(StorableText.refusal(where));
		}
		return new Bound(value, json);
	}

	/** The stored payload as the contract's type for it, or as a JSON tree when it has none. */
	Object read(@Nullable Class<?> type, String json) {
		return (type != null) ? this.mapper.readValue(json, type) : this.mapper.readTree(json);
	}

	String write(Object value) {
		return this.mapper.writeValueAsString(value);
	}

	<T> T read(String json, Class<T> type) {
		return this.mapper.readValue(json, type);
	}

	Event event(Contract contract, StoredEvent stored) {
		return new Event(stored.index(), stored.id(), stored.type(), read(contract.payloadType(stored.type()), stored.payload()),
				stored.createdAt(), stored.clearIndex(), stored.cause());
	}

	/** Scheduled events as stored: a JSON array of {@code {id, type, payload}}. */
	String writeScheduled(List<EventToStore> events) {
		ArrayNode array = this.mapper.createArrayNode();
		for (EventToStore event : events) {
			ObjectNode node = array.addObject();
			node.put("id", event.id());
			node.put("type", event.type());
			node.set("payload", this.mapper.readTree(event.payload()));
		}
		return this.mapper.writeValueAsString(array);
	}

	List<NewEvent> readScheduled(String json) {
		List<NewEvent> events = new ArrayList<>();
		for (JsonNode node : this.mapper.readTree(json)) {
			events.add(new NewEvent(node.get("type").asString(), node.get("payload"), node.get("id").asString()));
		}
		return events;
	}

	private @Nullable Object convert(Class<?> type, @Nullable Object payload) {
		if (payload == null) {
			return null;
		}
		JsonNode node = (payload instanceof JsonNode tree) ? tree : this.mapper.valueToTree(payload);
		ObjectReader reader = this.readers.get(type);
		if (reader == null) {
			reader = this.readers.computeIfAbsent(type, this.payloads::forType);
		}
		return reader.readValue(node);
	}

	private static String path(JacksonException ex) {
		StringBuilder path = new StringBuilder();
		for (JacksonException.Reference reference : ex.getPath()) {
			if (reference.getIndex() >= 0) {
				path.append('[').append(reference.getIndex()).append(']');
			}
			else if (reference.getPropertyName() != null) {
				path.append('.').append(reference.getPropertyName());
			}
		}
		return path.toString();
	}

	private static String describe(Class<?> type) {
		return type.isRecord() ? "an object (" + type.getSimpleName() + ")" : type.getSimpleName();
	}

}
