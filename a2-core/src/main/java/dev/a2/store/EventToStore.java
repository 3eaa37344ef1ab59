package dev.a2.store;

import java.util.List;

import dev.a2.Cause;
import org.jspecify.annotations.Nullable;

/**
 * An event ready to append: validated, with its id decided, its payload written as JSON, and the
 * consumer work it creates if it is new.
 */
public record EventToStore(String id, String type, String payload, @Nullable Cause cause, List<WorkUnit> work) {

	public EventToStore(String id, String type, String payload, @Nullable Cause cause) {
		this(id, type, payload, cause, List.of());
	}

}
