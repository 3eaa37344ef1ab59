package dev.a2.wire;

/**
 * How much a request body or frame may hold.
 *
 * @param maxBytes the largest body or frame, in bytes
 * @param maxDepth the deepest JSON nesting
 * @param maxStringLength the longest JSON string, in characters
 * @param maxEvents the most events one push may carry
 */
public record WireLimits(int maxBytes, int maxDepth, int maxStringLength, int maxEvents) {

	/** The limits {@code a2.web.*} defaults to: 256 KiB, depth 32, strings of 64 Ki characters, 100 events. */
	public static final WireLimits DEFAULTS = new WireLimits(256 * 1024, 32, 64 * 1024, 100);

}
