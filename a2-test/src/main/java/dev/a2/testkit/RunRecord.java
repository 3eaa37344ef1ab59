package dev.a2.testkit;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * One run of a consumer's code, in the {@link RunJournal}.
 *
 * @param contract the contract of the consumer and the session
 * @param consumer the consumer's name
 * @param session the session's id
 * @param index the index of the event it ran for (a batch's last event)
 * @param attempt 1 on the first try
 * @param at when it started, by the virtual clock
 * @param outcome how it ended
 * @param backOff after a {@link RunOutcome#FAILED failure}, how long the unit waits before its next attempt
 * @param error the exception of a failed run, as {@code Class: message}
 * @param stalled whether the kit stalled it ({@link A2TestKit.ConsumerFaults#stallNext()})
 */
public record RunRecord(String contract, String consumer, String session, long index, int attempt, Instant at, RunOutcome outcome,
		@Nullable Duration backOff, @Nullable String error, boolean stalled) {

	@Override
	public String toString() {
		return this.consumer + " " + this.contract + "/" + this.session + " #" + this.index + " attempt " + this.attempt + " at " + this.at + ": "
				+ this.outcome + ((this.backOff != null) ? " (back-off " + this.backOff + ")" : "")
				+ ((this.error != null) ? " " + this.error : "") + (this.stalled ? " [stalled]" : "");
	}

}
