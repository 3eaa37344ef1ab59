package dev.a2.store;

import java.time.Instant;

/**
 * A dead-lettered unit of consumer work: it stopped after too many failures and waits for an
 * operator's redrive. In a keyed or fixed lane it blocks the units after it.
 *
 * @param lane the lane key, the fixed lane's consumer cursor ({@code "cursor"}), or {@code null} for
 * an independent unit
 */
public record DeadLetter(String contract, String session, String consumer, String lane, long index,
		String eventId, String eventType, int attempts, int failures, String lastError, Instant failedAt) {
}
