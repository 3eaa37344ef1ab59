package dev.a2.store;

import java.time.Instant;

import dev.a2.Cause;
import org.jspecify.annotations.Nullable;

/**
 * An event row as the store keeps it: the payload is JSON text.
 */
public record StoredEvent(long index, String id, String type, String payload, Instant createdAt, int clearIndex,
		@Nullable Cause cause) {
}
