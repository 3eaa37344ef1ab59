package dev.a2.ai;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.a2.ConsumerContext;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.PresenceWrite;
import dev.a2.RunSession;
import dev.a2.ai.AiEvents.ReplyCompleted;
import dev.a2.ai.AiEvents.ReplyDelta;
import dev.a2.ai.AiEvents.ReplyFailed;
import dev.a2.ai.AiEvents.ReplyStopped;
import dev.a2.ai.AiEvents.TokenUsage;
import dev.a2.store.StorableText;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Writes the events of one attempt of a run's reply. Every id is derived from the trigger, the step,
 * the attempt and a sequence number, so a re-run of the same attempt appends nothing twice while a
 * new attempt never collides with an earlier one.
 */
final class ReplyWriter {

	private static final Log logger = LogFactory.getLog(ReplyWriter.class);

	private final RunSession session;

	private final ReplySettings settings;

	private final long replyTo;

	private final int attempt;

	private int step;

	private int sequence;

	private final StringBuilder pending = new StringBuilder();

	private int pendingChunks;

	private @Nullable String activity;

	private long activityWrittenAt;

	private final long renewActivityEvery;

	ReplyWriter(ConsumerContext context, ReplySettings settings) {
		this.session = context.session();
		this.settings = settings;
		this.replyTo = context.event().index();
		this.attempt = context.attempt();
		// as a client keeps its presence: written again every third of the TTL, so it never lapses in between
		// (a TTL of centuries, past a long's nanoseconds, is never renewed)
		Duration ttl = this.session.presenceTtl();
		this.renewActivityEvery = (ttl.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L) ? Long.MAX_VALUE
				: Math.max(1, ttl.toNanos() / 3);
	}

	long replyTo() {
		return this.replyTo;
	}

	int attempt() {
		return this.attempt;
	}

	int step() {
		return this.step;
	}

	void nextStep() {
		flushAll();
		this.step++;
		this.sequence = 0;
	}

	boolean hasPending() {
		return this.pendingChunks > 0;
	}

	int pendingChunks() {
		return this.pendingChunks;
	}

	void add(String text) {
		this.pending.append(text);
		this.pendingChunks++;
	}

	/**
	 * Appends what the model streamed since the last flush as one {@code reply.delta}, but for a high
	 * surrogate at its end: a model may split a character outside the Basic Multilingual Plane (an
	 * emoji) over two chunks, and half of one cannot be stored. It goes out with the next chunk. What
	 * cannot be stored even so (a NUL, half a pair whose other half never came) is stored as U+FFFD
	 * rather than fail the reply.
	 */
	void flush() {
		write(false);
	}

	/** Appends all the step's text still to go, the last chunk of a step included. */
	private void flushAll() {
		write(true);
	}

	private void write(boolean last) {
		int end = this.pending.length();
		if (!last && end > 0 && Character.isHighSurrogate(this.pending.charAt(end - 1))) {
			end--;
		}
		if (end > 0) {
			String text = StorableText.replacingUnstorable(this.pending.substring(0, end));
			append("delta/" + this.sequence,
					NewEvent.of(AiEvents.REPLY_DELTA, new ReplyDelta(this.replyTo, this.step, this.attempt, text)));
			this.sequence++;
			this.pending.delete(0, end);
		}
		// a surrogate held back waits for the next chunk, not for a timer
		this.pendingChunks = 0;
	}

	/** Claims the reply for this attempt, starting from {@code text} (empty to start over). */
	void restarted(int replaces, String text) {
		append("restarted",
				NewEvent.of(AiEvents.REPLY_RESTARTED, new AiEvents.ReplyRestarted(this.replyTo, this.attempt, replaces, text)));
	}

	void completed(@Nullable String finishReason, @Nullable TokenUsage usage) {
		flushAll();
		append("end", NewEvent.of(AiEvents.REPLY_COMPLETED, new ReplyCompleted(this.replyTo, this.step, this.attempt, finishReason, usage)));
	}

	/**
	 * The one place a running reply's stop is recorded: the text streamed so far, then
	 * {@code reply.stopped}, appended from the run as the abort ends it.
	 */
	void stopped(String reason, @Nullable TokenUsage usage) {
		flushAll();
		append("end", NewEvent.of(AiEvents.REPLY_STOPPED, new ReplyStopped(this.replyTo, this.step, this.attempt, reason, usage)));
	}

	/**
	 * Ends the replies that waited for approval, from the run of the Stop that came meanwhile: an answer
	 * for each call that still waited, then each reply's {@code reply.stopped}, in one append, so that no
	 * reader sees the calls answered and a reply still waiting. Its ids derive from the Stop alone: a
	 * second attempt of its run appends nothing twice.
	 */
	void stoppedWaiting(List<AiEvents.ToolResult> answers, List<ReplyStopped> stopped) {
		List<NewEvent> events = new ArrayList<>();
		answers.forEach((answer) -> events.add(NewEvent.of(AiEvents.TOOL_RESULT, answer)));
		stopped.forEach((end) -> events.add(NewEvent.of(AiEvents.REPLY_STOPPED, end)));
		this.session.append("a2.ai/stop-waiting", events.toArray(NewEvent[]::new));
	}

	void failed(String error, @Nullable TokenUsage usage) {
		flushAll();
		append("end", NewEvent.of(AiEvents.REPLY_FAILED,
				new ReplyFailed(this.replyTo, this.step, this.attempt, StorableText.replacingUnstorable(error), usage)));
	}

	void toolCalls(List<AiEvents.ToolCall> calls) {
		flushAll();
		NewEvent[] events = calls.stream().map((call) -> NewEvent.of(AiEvents.TOOL_CALL, call)).toArray(NewEvent[]::new);
		append("tool-calls", events);
	}

	Event toolResult(AiEvents.ToolResult result) {
		return append("tool-result/" + result.callId(), NewEvent.of(AiEvents.TOOL_RESULT, result)).get(0);
	}

	void approvalRequested(List<AiEvents.ToolApprovalRequested> requests) {
		NewEvent[] events = requests.stream()
			.map((request) -> NewEvent.of(AiEvents.TOOL_APPROVAL_REQUESTED, request))
			.toArray(NewEvent[]::new);
		append("end", events);
	}

	/**
	 * Nanoseconds until the activity shown must be written again for it not to expire while the run
	 * goes on (a model that thinks, or streams, for longer than the presence TTL); -1 when none is shown.
	 */
	long untilActivityRenewal() {
		if (this.activity == null || this.activity.equals("idle")) {
			return -1;
		}
		return Math.max(0, this.renewActivityEvery - (System.nanoTime() - this.activityWrittenAt));
	}

	/** Writes the activity shown again when its renewal is due. */
	void renewActivity() {
		String shown = this.activity;
		if (shown != null && untilActivityRenewal() == 0) {
			activity(shown);
		}
	}

	/** Shows the assistant's activity; presence is a courtesy, so a failure to write it ends nothing. */
	void activity(String activity) {
		this.activity = activity;
		this.activityWrittenAt = System.nanoTime();
		try {
			this.session.presence(PresenceWrite.of(this.settings.participant(), Map.of(AiEvents.PRESENCE_FIELD, activity)));
		}
		catch (RuntimeException ex) {
			logger.debug("Could not write the assistant's presence '" + activity + "' in session '" + this.session.id()
					+ "' (is AiEvents registered in its contract?)", ex);
		}
	}

	private List<Event> append(String name, NewEvent... events) {
		return this.session.append("a2.ai/" + this.step + "/" + this.attempt + "/" + name, events);
	}

}
