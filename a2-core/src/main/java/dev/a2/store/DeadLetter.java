package dev.a2.store;

import java.time.Instant;

/**
 * A dead-lettered unit of consumer work: it stopped after too many failures and waits for an
 * operator's redrive. In a keyed or fixed lane it blocks the units after it.
 *
 * @param lane the lane key of a keyed unit, the fixed lane's name for a consumer this server registers,
 * or {@code null}: an independent unit, or a fixed lane's dead letter of a consumer not registered here
 * (the lane's name is known only from its registration)
 */
public record DeadLetter(String contract, String session, String consumer, String lane, long index,
		String eventId, String eventType, int attempts, int failures, String lastError, Instant failedAt) {
}
