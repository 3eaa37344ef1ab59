package dev.a2.web;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How A2's endpoints behave.
 *
 * @param basePath where the routes live, such as {@code /a2}
 * @param ping how often an idle stream or socket is pinged
 * @param maxSubscriptionsPerSocket how many sessions one socket may follow at once
 * @param allowedOrigins origin patterns a WebSocket handshake may come from besides the server's own
 * @param presenceParticipant as whom a caller may write presence ({@link PresenceParticipant#CALLER}
 * unless said otherwise)
 */
public record A2WebSettings(String basePath, Duration ping, int maxSubscriptionsPerSocket, List<String> allowedOrigins,
		PresenceParticipant presenceParticipant) {

	/** Drops a trailing {@code /} of the base path and copies the origins. */
	public A2WebSettings {
		basePath = basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
		allowedOrigins = List.copyOf(allowedOrigins);
		Objects.requireNonNull(presenceParticipant, "presenceParticipant");
	}

	/** Settings where a caller with a name writes presence only as itself. */
	public A2WebSettings(String basePath, Duration ping, int maxSubscriptionsPerSocket, List<String> allowedOrigins) {
		this(basePath, ping, maxSubscriptionsPerSocket, allowedOrigins, PresenceParticipant.CALLER);
	}

}
