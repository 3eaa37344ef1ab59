package dev.a2.ai;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import dev.a2.Event;
import dev.a2.ai.AiEvents.MemoryMessage;
import dev.a2.ai.AiEvents.ReplyDelta;
import dev.a2.ai.AiEvents.ReplyRestarted;
import dev.a2.ai.AiEvents.ToolCall;
import dev.a2.ai.AiEvents.ToolResult;
import dev.a2.ai.Conversation.Entry;
import dev.a2.ai.Conversation.ToolCallEntry;
import dev.a2.ai.Conversation.Turn;
import org.jspecify.annotations.Nullable;

/**
 * Folds a session's events into its {@link Conversation}. The events of a reply belong to the turn
 * of their {@code replyTo}; an event of an attempt older than the turn's is ignored (a stalled
 * attempt that wakes after another took over writes nothing a reader sees), and
 * {@code reply.restarted} sets the turn to the text the new attempt starts from.
 */
final class ConversationFold implements BiFunction<Conversation, Event, Conversation> {

	private final Function<Event, @Nullable String> userMessages;

	ConversationFold(Function<Event, @Nullable String> userMessages) {
		this.userMessages = userMessages;
	}

	@Override
	public Conversation apply(Conversation conversation, Event event) {
		Object payload = event.payload();
		if (payload instanceof ReplyRestarted restarted) {
			// a continued reply is one model call's (step 0) text, which the attempt's deltas extend
			List<Entry> from = restarted.from().isEmpty() ? List.of()
					: List.of(new Entry(Conversation.ASSISTANT, restarted.from(), 0, List.of(), null, null));
			return withTurn(conversation, restarted.replyTo(), restarted.attempt(), true,
					(turn) -> new Turn(turn.replyTo(), restarted.attempt(), from, null));
		}
		if (payload instanceof ReplyDelta delta) {
			return withTurn(conversation, delta.replyTo(), delta.attempt(), false,
					(turn) -> withAssistantEntry(turn, delta.step(), (entry) -> new Entry(entry.role(),
							entry.text() + delta.text(), entry.step(), entry.toolCalls(), null, null)));
		}
		if (payload instanceof ToolCall call) {
			return withTurn(conversation, call.replyTo(), call.attempt(), false,
					(turn) -> withAssistantEntry(turn, call.step(), (entry) -> {
						List<ToolCallEntry> calls = new ArrayList<>(entry.toolCalls());
						calls.add(new ToolCallEntry(call.callId(), call.name(), call.arguments()));
						return new Entry(entry.role(), entry.text(), entry.step(), List.copyOf(calls), null, null);
					}));
		}
		if (payload instanceof ToolResult result) {
			return withTurn(conversation, result.replyTo(), result.attempt(), false, (turn) -> {
				List<Entry> entries = new ArrayList<>(turn.entries());
				entries.add(new Entry(Conversation.TOOL, result.result(), result.step(), List.of(), result.callId(), result.name()));
				return new Turn(turn.replyTo(), turn.attempt(), List.copyOf(entries), turn.end());
			});
		}
		if (payload instanceof AiEvents.ReplyCompleted completed) {
			return ended(conversation, completed.replyTo(), completed.attempt(), event.type());
		}
		if (payload instanceof AiEvents.ReplyStopped stopped) {
			return ended(conversation, stopped.replyTo(), stopped.attempt(), event.type());
		}
		if (payload instanceof AiEvents.ReplyFailed failed) {
			return ended(conversation, failed.replyTo(), failed.attempt(), event.type());
		}
		if (payload instanceof AiEvents.ToolApprovalRequested requested) {
			return ended(conversation, requested.replyTo(), requested.attempt(), event.type());
		}
		if (payload instanceof MemoryMessage message) {
			return append(conversation, new Turn(0, 0, List.of(Entry.of(message.role(), message.text())), null));
		}
		String userText = this.userMessages.apply(event);
		if (userText != null) {
			return append(conversation, new Turn(0, 0, List.of(Entry.of(Conversation.USER, userText)), null));
		}
		return conversation;
	}

	/**
	 * Ends the turn, once: a second end of the same attempt changes nothing (the client's
	 * {@code replies} folds the same way), but for a reply that waits for approval, which several
	 * requests end together and a Stop that comes meanwhile ends {@code reply.stopped}.
	 */
	private static Conversation ended(Conversation conversation, long replyTo, int attempt, String type) {
		return withTurn(conversation, replyTo, attempt, false, (turn) -> {
			boolean waits = AiEvents.TOOL_APPROVAL_REQUESTED.equals(turn.end());
			if (turn.end() != null && !(waits
					&& (type.equals(AiEvents.TOOL_APPROVAL_REQUESTED) || type.equals(AiEvents.REPLY_STOPPED)))) {
				return turn;
			}
			return new Turn(turn.replyTo(), turn.attempt(), turn.entries(), type);
		});
	}

	/**
	 * Applies {@code change} to the turn of {@code replyTo} (begun when absent). An older attempt
	 * changes nothing. Every attempt after the first begins with {@code reply.restarted}; a newer one
	 * without (a log written before it did) takes the turn over and keeps its entries.
	 */
	private static Conversation withTurn(Conversation conversation, long replyTo, int attempt, boolean restart,
			UnaryOperator<Turn> change) {
		List<Turn> turns = new ArrayList<>(conversation.turns());
		for (int i = turns.size() - 1; i >= 0; i--) {
			Turn turn = turns.get(i);
			if (turn.replyTo() == replyTo) {
				if (attempt < turn.attempt() || (restart && attempt == turn.attempt())) {
					return conversation;
				}
				Turn current = (attempt > turn.attempt()) ? new Turn(replyTo, attempt, turn.entries(), null) : turn;
				turns.set(i, change.apply(current));
				return new Conversation(List.copyOf(turns));
			}
		}
		turns.add(change.apply(new Turn(replyTo, attempt, List.of(), null)));
		return new Conversation(List.copyOf(turns));
	}

	private static Turn withAssistantEntry(Turn turn, int step, UnaryOperator<Entry> change) {
		List<Entry> entries = new ArrayList<>(turn.entries());
		for (int i = entries.size() - 1; i >= 0; i--) {
			Entry entry = entries.get(i);
			if (Conversation.ASSISTANT.equals(entry.role()) && entry.step() == step) {
				entries.set(i, change.apply(entry));
				return new Turn(turn.replyTo(), turn.attempt(), List.copyOf(entries), turn.end());
			}
		}
		entries.add(change.apply(new Entry(Conversation.ASSISTANT, "", step, List.of(), null, null)));
		return new Turn(turn.replyTo(), turn.attempt(), List.copyOf(entries), turn.end());
	}

	private static Conversation append(Conversation conversation, Turn turn) {
		List<Turn> turns = new ArrayList<>(conversation.turns());
		turns.add(turn);
		return new Conversation(List.copyOf(turns));
	}

}
