package dev.a2.store;

import dev.a2.Cause;
import org.jspecify.annotations.Nullable;

/**
 * An event ready to append: validated, with its id decided and its payload written as JSON.
 */
public record EventToStore(String id, String type, String payload, @Nullable Cause cause) {
}
