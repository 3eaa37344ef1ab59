package dev.a2;

import java.util.Objects;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * How a consumer's work is ordered.
 * <ul>
 * <li>{@link #independent()}: every matching event is a unit of its own; units run concurrently and
 * fail, retry and dead-letter independently.</li>
 * <li>{@link #keyed(BiFunction)}: units of a session with the same key run one after another in
 * index order; different keys run concurrently, and so does the same key in another session; a
 * {@code null} key means independent.</li>
 * <li>{@link #fixed(String)}: one cursor per session that walks the log of the consumer's types in
 * order, like a projection. Only such consumers can be {@code consume}d and backfill.</li>
 * </ul>
 */
public sealed interface Lane {

	/** Every matching event is a unit of its own (the default). */
	static Lane independent() {
		return Independent.INSTANCE;
	}

	/**
	 * A key per event, computed as the event is appended (before it has an index): a function of the
	 * session id and the event.
	 */
	static Lane keyed(Function<KeyInput, @Nullable String> key) {
		return new Keyed(Objects.requireNonNull(key, "key"));
	}

	/** One cursor per session, named {@code name}. */
	static Lane fixed(String name) {
		if (name == null || name.isEmpty()) {
			throw new IllegalArgumentException("a fixed lane needs a non-empty name");
		}
		return new Fixed(name);
	}

	/** Every matching event is its own unit. */
	enum Independent implements Lane {

		/** The only independent lane. */
		INSTANCE

	}

	/** Units ordered per key. */
	record Keyed(Function<KeyInput, @Nullable String> key) implements Lane {
	}

	/** What a lane key is computed from: the session and the event being appended. */
	record KeyInput(String session, String eventId, String type, Object payload) {
	}

	/** One cursor per session. */
	record Fixed(String name) implements Lane {
	}

}
