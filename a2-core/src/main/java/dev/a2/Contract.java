package dev.a2;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * A named vocabulary of event types, presence fields and reducers. Every session belongs to one
 * contract, and every row and URL is scoped by its name.
 *
 * <pre>{@code
 * Contract chat = Contract.builder("chat")
 *     .event("message.sent", MessageSent.class)
 *     .presence("typing", Boolean.class)
 *     .event("answer.done", AnswerDone.class)
 *     .serverOnly("answer.done")
 *     .presence("typing", Boolean.class)
 *     .reducer("count", Reducer.of(Integer.class, 0, (n, event) -> n + 1))
 *     .build();
 * }</pre>
 */
public final class Contract {

	private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");

	/** The prefix of the types, consumers and participants that A2 keeps for itself. */
	static final String RESERVED_PREFIX = "a2.";

	private final String name;

	private final Map<String, Class<?>> events;

	private final Map<String, Class<?>> presence;

	private final Map<String, Reducer<?>> reducers;

	private final Set<String> serverOnly;

	private Contract(Builder builder) {
		this.name = builder.name;
		this.events = Collections.unmodifiableMap(new LinkedHashMap<>(builder.events));
		this.serverOnly = Collections.unmodifiableSet(new LinkedHashSet<>(builder.serverOnly));
		this.presence = Collections.unmodifiableMap(new LinkedHashMap<>(builder.presence));
		this.reducers = Collections.unmodifiableMap(new LinkedHashMap<>(builder.reducers));
	}

	/** A builder of the contract named {@code name}: 1-64 characters of {@code [a-z0-9._-]}, starting with a letter or digit. */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	/** Its name, which scopes every session, URL and table row of it. */
	public String name() {
		return this.name;
	}

	/** Event type to payload type, in declaration order. */
	public Map<String, Class<?>> events() {
		return this.events;
	}

	/**
	 * The event types clients may not push: consumers and the application's own code write them
	 * (an assistant's answer, an order's shipment). The endpoints refuse a push of one with
	 * {@code FORBIDDEN}; {@link Session#append} takes them as any other type.
	 */
	public Set<String> serverOnly() {
		return this.serverOnly;
	}

	/** Whether clients may not push events of {@code type}: see {@link #serverOnly()}. */
	public boolean isServerOnly(String type) {
		return this.serverOnly.contains(type);
	}

	/** Presence field to value type, in declaration order. */
	public Map<String, Class<?>> presence() {
		return this.presence;
	}

	/** Reducer name to reducer, in declaration order. */
	public Map<String, Reducer<?>> reducers() {
		return this.reducers;
	}

	/** The payload type of an event type, or {@code null} when the contract has no such type. */
	public @Nullable Class<?> payloadType(String type) {
		return this.events.get(type);
	}

	/** The named reducer; {@code UNKNOWN_REDUCER} when there is none. */
	public Reducer<?> reducer(String reducerName) {
		Reducer<?> reducer = this.reducers.get(reducerName);
		if (reducer == null) {
			// names what was asked, never the reducers there are: the caller may be anyone
			throw new A2Exception(ErrorCode.UNKNOWN_REDUCER, "contract '" + this.name + "' has no reducer '"
					+ reducerName + "'");
		}
		return reducer;
	}

	@Override
	public String toString() {
		return "Contract[" + this.name + ", events=" + this.events.keySet() + "]";
	}

	/** Builds a {@link Contract}; every rule is checked as it is added, with a message naming the fix. */
	public static final class Builder {

		private final String name;

		private final Map<String, Class<?>> events = new LinkedHashMap<>();

		private final Map<String, Class<?>> presence = new LinkedHashMap<>();

		private final Map<String, Reducer<?>> reducers = new LinkedHashMap<>();

		private final Set<String> serverOnly = new LinkedHashSet<>();

		private Builder(String name) {
			Objects.requireNonNull(name, "name");
			if (!NAME.matcher(name).matches()) {
				throw new IllegalArgumentException("contract name '" + name
						+ "' must be 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit");
			}
			this.name = name;
		}

		/** Declares an event type and the Java type (usually a record) its payload binds to. */
		public Builder event(String type, Class<?> payloadType) {
			Objects.requireNonNull(payloadType, "payloadType");
			if (type == null || type.isEmpty()) {
				throw new IllegalArgumentException("contract '" + this.name + "': an event type must be a non-empty string");
			}
			if (type.startsWith(RESERVED_PREFIX)) {
				throw new IllegalArgumentException("contract '" + this.name + "': event type '" + type
						+ "' starts with 'a2.', which A2 keeps for its own events; choose another name");
			}
			putOnce(this.events, type, payloadType, "event type");
			return this;
		}

		/**
		 * Marks event types, declared with {@link #event} before or after, that clients may not push:
		 * only consumers and the application's own code append them.
		 */
		public Builder serverOnly(String... types) {
			for (String type : List.of(types)) {
				this.serverOnly.add(Objects.requireNonNull(type, "type"));
			}
			return this;
		}

		/** Declares a presence field and the type of its value. */
		public Builder presence(String field, Class<?> valueType) {
			Objects.requireNonNull(valueType, "valueType");
			if (field == null || field.isEmpty()) {
				throw new IllegalArgumentException("contract '" + this.name + "': a presence field must be a non-empty string");
			}
			putOnce(this.presence, field, valueType, "presence field");
			return this;
		}

		/** Declares a reducer under a name. */
		public Builder reducer(String reducerName, Reducer<?> reducer) {
			Objects.requireNonNull(reducer, "reducer");
			if (reducerName == null || reducerName.isEmpty()) {
				throw new IllegalArgumentException("contract '" + this.name + "': a reducer name must be a non-empty string");
			}
			putOnce(this.reducers, reducerName, reducer, "reducer");
			return this;
		}

		/** The contract; it refuses a contract with no event type. */
		public Contract build() {
			if (this.events.isEmpty()) {
				throw new IllegalArgumentException("contract '" + this.name + "' declares no event types; add at least one with event(type, payloadType)");
			}
			for (String type : this.serverOnly) {
				if (!this.events.containsKey(type)) {
					throw new IllegalArgumentException("contract '" + this.name + "' marks '" + type
							+ "' server-only but declares no such event type; declare it with event(type, payloadType)");
				}
			}
			return new Contract(this);
		}

		private <V> void putOnce(Map<String, V> map, String key, V value, String what) {
			if (map.putIfAbsent(key, value) != null) {
				throw new IllegalArgumentException("contract '" + this.name + "' declares " + what + " '" + key + "' twice");
			}
		}

	}

}
