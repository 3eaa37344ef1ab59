package dev.a2.ai;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;

/**
 * A session's conversation as a model is sent it, folded from the session's events by the
 * {@link AiEvents#CONVERSATION} reducer. It is a list of turns: a user's message, a message written
 * through chat memory, or the reply of one run, which holds only the latest attempt's text, tool
 * calls and results.
 *
 * @param turns in the order they began
 */
public record Conversation(List<Turn> turns) {

	static final Conversation EMPTY = new Conversation(List.of());

	/** The roles of {@link Entry#role()}. */
	public static final String USER = "user", ASSISTANT = "assistant", SYSTEM = "system", TOOL = "tool";

	/**
	 * A turn: a single message ({@code replyTo} 0), or the reply of the run that answers the event at
	 * {@code replyTo}.
	 * @param attempt the run's attempt whose entries these are
	 * @param end how the reply ended so far: {@code null} while it streams, else the type of its end
	 * event ({@code reply.completed}, {@code reply.stopped}, {@code reply.failed},
	 * {@code tool.approval.requested})
	 */
	public record Turn(long replyTo, int attempt, List<Entry> entries, @Nullable String end) {

		/** The assistant's text of this turn, all steps together. */
		public String text() {
			StringBuilder text = new StringBuilder();
			for (Entry entry : this.entries) {
				if (ASSISTANT.equals(entry.role())) {
					text.append(entry.text());
				}
			}
			return text.toString();
		}

	}

	/**
	 * One message.
	 * @param step the model call of the run that wrote it (0 for messages outside replies)
	 * @param toolCalls the tools an assistant message asks for
	 * @param callId for a tool's answer: the call it answers
	 */
	public record Entry(String role, String text, int step, List<ToolCallEntry> toolCalls, @Nullable String callId,
			@Nullable String toolName) {

		static Entry of(String role, String text) {
			return new Entry(role, text, 0, List.of(), null, null);
		}

	}

	/** A tool call of an assistant message. */
	public record ToolCallEntry(String id, String name, String arguments) {
	}

	/** The turn of the run that answers the event at {@code replyTo}, or {@code null}. */
	public @Nullable Turn reply(long replyTo) {
		for (int i = this.turns.size() - 1; i >= 0; i--) {
			Turn turn = this.turns.get(i);
			if (turn.replyTo() == replyTo) {
				return turn;
			}
		}
		return null;
	}

	/** The call {@code callId} the model asked for, or {@code null}. */
	public @Nullable ToolCallEntry toolCall(String callId) {
		for (Turn turn : this.turns) {
			for (Entry entry : turn.entries()) {
				for (ToolCallEntry call : entry.toolCalls()) {
					if (call.id().equals(callId)) {
						return call;
					}
				}
			}
		}
		return null;
	}

	/** Whether a tool answer for {@code callId} is in the conversation. */
	public boolean answered(String callId) {
		return answeredCalls().contains(callId);
	}

	/** The ids of the calls the conversation holds a tool answer to. */
	Set<String> answeredCalls() {
		Set<String> answered = new HashSet<>();
		for (Turn turn : this.turns) {
			for (Entry entry : turn.entries()) {
				if (TOOL.equals(entry.role()) && entry.callId() != null) {
					answered.add(entry.callId());
				}
			}
		}
		return answered;
	}

	/**
	 * This conversation with the answers {@code later} holds to calls of it that are unanswered here:
	 * answers stored after the point this one was read at (the run of a later approval answered them).
	 */
	Conversation withAnswersFrom(Conversation later) {
		Set<String> answered = answeredCalls();
		List<Entry> answers = new ArrayList<>();
		for (Turn turn : later.turns()) {
			for (Entry entry : turn.entries()) {
				if (TOOL.equals(entry.role()) && entry.callId() != null && toolCall(entry.callId()) != null
						&& !answered.contains(entry.callId())) {
					answers.add(entry);
				}
			}
		}
		if (answers.isEmpty()) {
			return this;
		}
		List<Turn> turns = new ArrayList<>(this.turns);
		// where the answers sit does not matter: messages() sends each right after its call
		turns.add(new Turn(0, 0, List.copyOf(answers), null));
		return new Conversation(List.copyOf(turns));
	}

	/**
	 * The conversation as Spring AI messages, in order. A model must be sent every call's answer right
	 * after the call, so the answers follow their call's message, wherever they are in the log: a call
	 * that waited for a person is answered by a later run, after whatever was said meanwhile. A call
	 * that has no answer yet is left out.
	 */
	public List<Message> messages() {
		Map<String, Entry> answers = new HashMap<>();
		for (Turn turn : this.turns) {
			for (Entry entry : turn.entries()) {
				if (TOOL.equals(entry.role()) && entry.callId() != null) {
					answers.putIfAbsent(entry.callId(), entry);
				}
			}
		}
		List<Message> messages = new ArrayList<>();
		Set<String> sent = new HashSet<>();
		for (Turn turn : this.turns) {
			for (Entry entry : turn.entries()) {
				if (TOOL.equals(entry.role())) {
					if (entry.callId() == null || sent.add(entry.callId())) {
						messages.add(Objects.requireNonNull(message(entry)));
					}
					continue;
				}
				List<ToolCallEntry> answered = entry.toolCalls().stream().filter((call) -> answers.containsKey(call.id())).toList();
				Message message = message(new Entry(entry.role(), entry.text(), entry.step(), answered, entry.callId(),
						entry.toolName()));
				if (message != null) {
					messages.add(message);
				}
				for (ToolCallEntry call : answered) {
					if (sent.add(call.id())) {
						messages.add(Objects.requireNonNull(message(answers.get(call.id()))));
					}
				}
			}
		}
		return messages;
	}

	private static @Nullable Message message(Entry entry) {
		return switch (entry.role()) {
			case USER -> new UserMessage(entry.text());
			case SYSTEM -> new SystemMessage(entry.text());
			case TOOL -> ToolResponseMessage.builder()
				.responses(List.of(new ToolResponseMessage.ToolResponse(String.valueOf(entry.callId()),
						String.valueOf(entry.toolName()), entry.text())))
				.build();
			default -> (entry.text().isEmpty() && entry.toolCalls().isEmpty()) ? null
					: AssistantMessage.builder()
						.content(entry.text())
						.toolCalls(entry.toolCalls()
							.stream()
							.map((call) -> new AssistantMessage.ToolCall(call.id(), "function", call.name(), call.arguments()))
							.toList())
						.build();
		};
	}

}
