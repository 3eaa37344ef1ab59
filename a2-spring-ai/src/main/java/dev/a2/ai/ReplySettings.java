package dev.a2.ai;

import java.time.Duration;

/**
 * How a reply is written.
 *
 * @param flushInterval the longest a streamed token waits before it is appended
 * @param flushTokens appends at once when this many chunks of the model's stream are waiting
 * @param participant the presence participant whose {@link AiEvents#PRESENCE_FIELD} shows the
 * assistant's activity
 * @param maxSteps the most model calls one run makes (each round of tool calls is one more)
 */
public record ReplySettings(Duration flushInterval, int flushTokens, String participant, int maxSteps) {

	/** 50 ms or 64 chunks, participant {@code assistant}, 8 model calls per run. */
	public static final ReplySettings DEFAULTS = new ReplySettings(Duration.ofMillis(50), 64, "assistant", 8);

	public ReplySettings {
		if (flushInterval.isNegative() || flushInterval.isZero()) {
			throw new IllegalArgumentException("flushInterval must be positive, was " + flushInterval);
		}
		if (flushTokens < 1) {
			throw new IllegalArgumentException("flushTokens must be at least 1, was " + flushTokens);
		}
		if (participant.isEmpty() || participant.length() > 128 || participant.equals("a2") || participant.startsWith("a2.")) {
			throw new IllegalArgumentException("participant must be 1-128 characters and not 'a2' or 'a2.…', was '" + participant + "'");
		}
		if (maxSteps < 1) {
			throw new IllegalArgumentException("maxSteps must be at least 1, was " + maxSteps);
		}
	}

	public ReplySettings withFlush(Duration flushInterval, int flushTokens) {
		return new ReplySettings(flushInterval, flushTokens, this.participant, this.maxSteps);
	}

	public ReplySettings withParticipant(String participant) {
		return new ReplySettings(this.flushInterval, this.flushTokens, participant, this.maxSteps);
	}

}
