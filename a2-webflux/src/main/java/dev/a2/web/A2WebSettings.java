package dev.a2.web;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How A2's endpoints behave.
 *
 * @param basePath where the routes live, such as {@code /a2}
 * @param ping how often an idle stream or socket is pinged
 * @param maxSubscriptionsPerSocket how many sessions one socket may follow at once
 * @param allowedOrigins origin patterns a WebSocket handshake may come from besides the server's own
 * @param presenceParticipant as whom a caller may write presence ({@link PresenceParticipant#CALLER}
 * unless said otherwise)
 * @param reauthorizeEvery how often an open stream or socket subscription asks the authorizer again
 * whether its caller may still read its session, and ends when it may not ({@link #REAUTHORIZE_EVERY}
 * unless said otherwise); {@link Duration#ZERO} never asks again
 */
public record A2WebSettings(String basePath, Duration ping, int maxSubscriptionsPerSocket, List<String> allowedOrigins,
		PresenceParticipant presenceParticipant, Duration reauthorizeEvery) {

	/**
	 * How often an open stream or subscription is authorized again by default: a caller removed from a
	 * session stops receiving it within a minute, at one authorizer call a minute per open stream.
	 */
	public static final Duration REAUTHORIZE_EVERY = Duration.ofMinutes(1);

	/**
	 * What an allowed origin may be: {@code *}, or a scheme, {@code ://}, a host and an optional port, any
	 * part a pattern with {@code *} and the port a list in brackets ({@code https://*.example.com},
	 * {@code http://localhost:[8080,8081]}); a trailing {@code /} is dropped when matched.
	 */
	private static final Pattern ORIGIN = Pattern.compile(
			"\\*|([A-Za-z][A-Za-z0-9+.-]*|\\*)://(\\[[0-9A-Fa-f:.]+]|[^/?#\\s\\[\\],:]+)(:(\\d+|\\*|\\[\\d+(,\\s*\\d+)*]))?/?");

	/**
	 * Drops a trailing {@code /} of the base path and copies the origins; refuses a negative re-check
	 * interval, and an allowed origin no page's {@code Origin} could match ({@code example.com} without
	 * its scheme, a path, an unclosed port list), which would refuse that page's sockets without a word.
	 */
	public A2WebSettings {
		basePath = basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
		allowedOrigins = List.copyOf(allowedOrigins);
		for (String origin : allowedOrigins) {
			if (!ORIGIN.matcher(origin).matches()) {
				throw new IllegalArgumentException("allowed origin '" + origin + "' matches no page: an origin is "
						+ "scheme://host[:port] (https://app.example.com), a pattern puts * for a part or the port "
						+ "(https://*.example.com, http://localhost:*, http://localhost:[8080,8081]), or * allows every origin");
			}
		}
		Objects.requireNonNull(presenceParticipant, "presenceParticipant");
		Objects.requireNonNull(reauthorizeEvery, "reauthorizeEvery");
		if (reauthorizeEvery.isNegative()) {
			throw new IllegalArgumentException("reauthorizeEvery must be 0 (never) or longer, was " + reauthorizeEvery);
		}
	}

	/** Settings whose streams and subscriptions are authorized again every {@link #REAUTHORIZE_EVERY}. */
	public A2WebSettings(String basePath, Duration ping, int maxSubscriptionsPerSocket, List<String> allowedOrigins,
			PresenceParticipant presenceParticipant) {
		this(basePath, ping, maxSubscriptionsPerSocket, allowedOrigins, presenceParticipant, REAUTHORIZE_EVERY);
	}

	/** Settings where a caller with a name writes presence only as itself. */
	public A2WebSettings(String basePath, Duration ping, int maxSubscriptionsPerSocket, List<String> allowedOrigins) {
		this(basePath, ping, maxSubscriptionsPerSocket, allowedOrigins, PresenceParticipant.CALLER);
	}

}
