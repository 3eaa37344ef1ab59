package dev.a2.ai;

import java.util.function.Function;

import dev.a2.Contract;
import dev.a2.Event;
import dev.a2.Reducer;
import org.jspecify.annotations.Nullable;

/**
 * The event types, presence field and reducer of AI replies, and their payloads. Register them in a
 * contract with {@link #register(Contract.Builder)} (or {@link #register(Contract.Builder, Function)}
 * to let the conversation hold the application's own user messages):
 *
 * <pre>{@code
 * Contract.Builder chat = Contract.builder("chat").event("message.sent", MessageSent.class);
 * AiEvents.register(chat, (event) -> event.type().equals("message.sent")
 *         ? event.payload(MessageSent.class).text() : null);
 * }</pre>
 *
 * Every event of a reply names the run it belongs to ({@code replyTo}, the index of the event the
 * run answers), the model call within the run ({@code step}: 0, then one more after each round of
 * tool calls) and the {@code attempt} of the run that wrote it. A client keeps, per
 * {@code replyTo}, only the text of the latest attempt: {@link #REPLY_RESTARTED} tells it to drop
 * what an earlier attempt wrote.
 */
public final class AiEvents {

	/** A piece of the reply's text: what the model streamed since the previous flush. */
	public static final String REPLY_DELTA = "reply.delta";

	/** A new attempt of the run starts the reply over: drop the text of earlier attempts. */
	public static final String REPLY_RESTARTED = "reply.restarted";

	/** The model finished the reply. */
	public static final String REPLY_COMPLETED = "reply.completed";

	/**
	 * The run was stopped (an {@code abortOn} event such as a user's stop); the model's stream was
	 * cancelled. Also the end of a reply that waited for approval when the Stop came: its waiting calls
	 * were answered as stopped.
	 */
	public static final String REPLY_STOPPED = "reply.stopped";

	/** The model failed; the reply ends here. */
	public static final String REPLY_FAILED = "reply.failed";

	/** The model asked for a tool. */
	public static final String TOOL_CALL = "tool.call";

	/** What a tool answered (or that a person rejected the call). */
	public static final String TOOL_RESULT = "tool.result";

	/** A tool call waits for a person's approval; the run ended. */
	public static final String TOOL_APPROVAL_REQUESTED = "tool.approval.requested";

	/** A person approved a waiting tool call (pushed by a client); a new run continues the conversation. */
	public static final String TOOL_APPROVED = "tool.approved";

	/** A person rejected a waiting tool call (pushed by a client); a new run continues the conversation. */
	public static final String TOOL_REJECTED = "tool.rejected";

	/** A message written through the {@link SessionChatMemoryRepository}. */
	public static final String MEMORY_MESSAGE = "memory.message";

	/** The presence field the assistant's activity is written to: {@code thinking}, {@code streaming}, {@code idle}. */
	public static final String PRESENCE_FIELD = "ai.status";

	/** The reducer that folds the session's events into the conversation a model is sent. */
	public static final String CONVERSATION = "ai.conversation";

	private AiEvents() {
	}

	/**
	 * Registers the event types, the presence field and the conversation reducer. Every type but
	 * {@code tool.approved} and {@code tool.rejected} is server-only: a reply and its tools are written by
	 * the run, never pushed by a client.
	 */
	public static Contract.Builder register(Contract.Builder contract) {
		return register(contract, (event) -> null);
	}

	/**
	 * Registers the event types, the presence field and the conversation reducer; {@code userMessages}
	 * answers the text of the application's events that are a user's message to the model (and
	 * {@code null} for every other event). Server-only types as {@link #register(Contract.Builder)}.
	 */
	public static Contract.Builder register(Contract.Builder contract, Function<Event, @Nullable String> userMessages) {
		return contract.event(REPLY_DELTA, ReplyDelta.class)
			.event(REPLY_RESTARTED, ReplyRestarted.class)
			.event(REPLY_COMPLETED, ReplyCompleted.class)
			.event(REPLY_STOPPED, ReplyStopped.class)
			.event(REPLY_FAILED, ReplyFailed.class)
			.event(TOOL_CALL, ToolCall.class)
			.event(TOOL_RESULT, ToolResult.class)
			.event(TOOL_APPROVAL_REQUESTED, ToolApprovalRequested.class)
			.event(TOOL_APPROVED, ToolApproved.class)
			.event(TOOL_REJECTED, ToolRejected.class)
			.event(MEMORY_MESSAGE, MemoryMessage.class)
			.serverOnly(REPLY_DELTA, REPLY_RESTARTED, REPLY_COMPLETED, REPLY_STOPPED, REPLY_FAILED, TOOL_CALL, TOOL_RESULT,
					TOOL_APPROVAL_REQUESTED, MEMORY_MESSAGE)
			.presence(PRESENCE_FIELD, String.class)
			.reducer(CONVERSATION, Reducer.of(Conversation.class, Conversation.EMPTY, new ConversationFold(userMessages)));
	}

	/** Text the model streamed since the previous flush. */
	public record ReplyDelta(long replyTo, int step, int attempt, String text) {
	}

	/**
	 * Attempt {@code attempt} starts the reply to {@code replyTo} over, replacing attempt
	 * {@code replaces}: the reply's text is {@code text} from here on, to which the attempt's deltas add.
	 * It is empty unless the attempt continues the partial text an earlier one stored
	 * ({@code ReplyStream.stream(context, responses, true)}); {@code null} in events stored before it
	 * was added, which started over.
	 */
	public record ReplyRestarted(long replyTo, int attempt, int replaces, @Nullable String text) {

		/** The text the attempt starts from. */
		public String from() {
			return (this.text != null) ? this.text : "";
		}

	}

	/** Tokens the model counted, for every call of a run that reported them added up; any may be unknown. */
	public record TokenUsage(@Nullable Integer promptTokens, @Nullable Integer completionTokens,
			@Nullable Integer totalTokens) {
	}

	/** The model finished: {@code finishReason} as the provider says it ({@code STOP}, {@code LENGTH} …). */
	public record ReplyCompleted(long replyTo, int step, int attempt, @Nullable String finishReason,
			@Nullable TokenUsage usage) {
	}

	/**
	 * The run was stopped; {@code reason} says by what. {@code usage} sums the model calls of the run
	 * that reported their tokens (a provider's stream cancelled mid-answer usually reports none), as
	 * billing reads it: {@code null} when none did, and for a reply that waited for approval, whose
	 * approval request carried its run's usage.
	 */
	public record ReplyStopped(long replyTo, int step, int attempt, String reason, @Nullable TokenUsage usage) {
	}

	/** The model failed with {@code error}; {@code usage} sums the run's model calls that reported their tokens, or {@code null}. */
	public record ReplyFailed(long replyTo, int step, int attempt, String error, @Nullable TokenUsage usage) {
	}

	/** The model asked for tool {@code name} with JSON {@code arguments}. */
	public record ToolCall(long replyTo, int step, int attempt, String callId, String name, String arguments) {
	}

	/** What the tool answered, or, when {@code rejected}, why a person did not let it run. */
	public record ToolResult(long replyTo, int step, int attempt, String callId, String name, String result,
			boolean rejected) {
	}

	/**
	 * Tool call {@code callId} waits for a person: push {@link ToolApproved} or {@link ToolRejected}.
	 * The run ends here, so the first of its requests carries the {@code usage} of the run's model calls
	 * (the others {@code null}): what a product bills adds up over a reply's end events and its approval
	 * requests without counting a call twice.
	 */
	public record ToolApprovalRequested(long replyTo, int step, int attempt, String callId, String name,
			String arguments, @Nullable TokenUsage usage) {
	}

	/** A person lets tool call {@code callId} run. */
	public record ToolApproved(String callId) {

		/** Refuses an approval that names no call: it was stored, and approved nothing without a word. */
		public ToolApproved {
			requireCallId(callId);
		}

	}

	/** A person does not let tool call {@code callId} run; {@code reason} is told to the model. */
	public record ToolRejected(String callId, @Nullable String reason) {

		/** Refuses a rejection that names no call. */
		public ToolRejected {
			requireCallId(callId);
		}

	}

	private static void requireCallId(@Nullable String callId) {
		if (callId == null || callId.isBlank()) {
			throw new IllegalArgumentException("callId must name the tool call, as its tool.approval.requested does, was "
					+ ((callId == null) ? "none" : "'" + callId + "'"));
		}
	}

	/** A message of the conversation written through Spring AI's chat memory: {@code role} is {@code user}, {@code assistant} or {@code system}. */
	public record MemoryMessage(String role, String text) {
	}

}
