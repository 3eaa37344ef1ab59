package dev.a2.ai;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import dev.a2.A2Server;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.SessionState;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.MessageType;
import org.springframework.ai.chat.messages.ToolResponseMessage;

/**
 * Spring AI chat memory on A2 sessions: a conversation id is a session id of one contract, and its
 * messages are the session's {@link Conversation}, folded from its events (the application's user
 * messages, the replies {@link ReplyStream} wrote, and what was saved here). What the model is sent
 * and what the browsers see are one log.
 * <p>
 * {@link #saveAll} appends only what is new, as {@code memory.message} events in one batch. The
 * messages given must begin with the stored conversation (or a window of it that leaves out older
 * messages but keeps the latest, as {@code MessageWindowChatMemory} saves), followed by the new
 * ones; a list that changes, drops or reorders the latest stored messages is refused with an
 * {@link IllegalArgumentException} and nothing is written: the log is never rewritten.
 * <p>
 * A message saved twice from the same stored conversation is stored once: a retried request racing
 * its original, on one instance or two, saves the same new messages after the same last index, and
 * their events' ids derive from that index, their place and their content.
 */
public final class SessionChatMemoryRepository implements ChatMemoryRepository {

	private final A2Server server;

	private final String contract;

	/** @param contract a contract in which {@link AiEvents} are registered */
	public SessionChatMemoryRepository(A2Server server, String contract) {
		this.server = Objects.requireNonNull(server, "server");
		this.contract = Objects.requireNonNull(contract, "contract");
		if (!server.contract(contract).reducers().containsKey(AiEvents.CONVERSATION)) {
			throw new IllegalArgumentException("contract '" + contract + "' has no reducer '" + AiEvents.CONVERSATION
					+ "'; register the AI events with AiEvents.register(builder) when building it");
		}
	}

	/**
	 * Not supported: A2 does not list a contract's sessions. Spring AI's {@code ChatMemory} does not
	 * call it.
	 */
	@Override
	public List<String> findConversationIds() {
		throw new UnsupportedOperationException("A2 does not list the sessions of contract '" + this.contract
				+ "'; keep the conversation ids (session ids) where your application lists its sessions");
	}

	@Override
	public List<Message> findByConversationId(String conversationId) {
		return conversation(session(conversationId)).messages();
	}

	@Override
	public void saveAll(String conversationId, List<Message> messages) {
		Session session = session(conversationId);
		SessionState<Conversation> read = session.state(AiEvents.CONVERSATION, Conversation.class);
		List<Message> stored = read.state().messages();
		int known = storedPrefix(stored, messages, conversationId);
		List<NewEvent> events = new ArrayList<>();
		for (int i = known; i < messages.size(); i++) {
			Message message = messages.get(i);
			events.add(NewEvent.of(AiEvents.MEMORY_MESSAGE, memoryMessage(message), savedId(read.index(), i - known, message)));
		}
		if (!events.isEmpty()) {
			session.append(events);
		}
	}

	/** Clears the session: its conversation starts over (its older events are hidden, not deleted). */
	@Override
	public void deleteByConversationId(String conversationId) {
		session(conversationId).clear();
	}

	private Session session(String conversationId) {
		return this.server.session(this.contract, conversationId);
	}

	private static Conversation conversation(Session session) {
		return (Conversation) session.state(AiEvents.CONVERSATION).state();
	}

	/**
	 * How many of {@code given} are already stored. {@code given} must begin with what a window
	 * keeps of the stored conversation: some of the system messages before a cut, then every stored
	 * message after it (as {@code MessageWindowChatMemory} saves); the rest is new. The cut is taken as
	 * early as possible, and something stored must be kept: a list that keeps nothing of a stored
	 * conversation cannot be told from one that rewrites it.
	 */
	private static int storedPrefix(List<Message> stored, List<Message> given, String conversationId) {
		if (stored.isEmpty()) {
			return 0;
		}
		List<String> storedKeys = stored.stream().map(SessionChatMemoryRepository::key).toList();
		List<String> givenKeys = given.stream().map(SessionChatMemoryRepository::key).toList();
		for (int cut = 0; cut <= stored.size(); cut++) {
			int kept = 0;
			int system = 0;
			while (kept < given.size() && given.get(kept).getMessageType() == MessageType.SYSTEM) {
				int found = storedKeys.subList(system, cut).indexOf(givenKeys.get(kept));
				if (found < 0) {
					break;
				}
				system += found + 1;
				kept++;
			}
			List<String> tail = storedKeys.subList(cut, stored.size());
			if (kept + tail.size() <= given.size() && givenKeys.subList(kept, kept + tail.size()).equals(tail)
					&& kept + tail.size() > 0) {
				return kept + tail.size();
			}
		}
		throw new IllegalArgumentException("saveAll would rewrite conversation '" + conversationId + "': the "
				+ given.size() + " given message(s) do not begin with the stored conversation (or a window of it ending with its"
				+ " latest message, " + describe(stored.get(stored.size() - 1))
				+ "). A2 appends only: pass the stored messages followed by the new ones, or start over with deleteByConversationId");
	}

	/**
	 * The id of the {@code ordinal}th new message of a save made after {@code index}: a save that
	 * races another of the same messages (both read before either wrote) sends the same ids, and
	 * the session stores them once.
	 */
	private static String savedId(long index, int ordinal, Message message) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(key(message).getBytes(StandardCharsets.UTF_8));
			return "memory-" + index + "-" + ordinal + "-" + HexFormat.of().formatHex(digest, 0, 8);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("every Java platform has SHA-256", ex);
		}
	}

	/** What makes two messages the same for the conversation: role, text, tool calls and answers, not metadata. */
	private static String key(Message message) {
		StringBuilder key = new StringBuilder(message.getMessageType().name()).append('\u0000').append(message.getText());
		if (message instanceof AssistantMessage assistant) {
			assistant.getToolCalls().forEach((call) -> key.append('\u0000').append(call.id()).append(call.name()).append(call.arguments()));
		}
		if (message instanceof ToolResponseMessage tools) {
			tools.getResponses().forEach((response) -> key.append('\u0000').append(response.id()).append(response.responseData()));
		}
		return key.toString();
	}

	private static String describe(Message message) {
		String text = String.valueOf(message.getText());
		return message.getMessageType().getValue() + " '" + ((text.length() > 40) ? text.substring(0, 40) + "…" : text) + "'";
	}

	private static AiEvents.MemoryMessage memoryMessage(Message message) {
		MessageType type = message.getMessageType();
		if (type == MessageType.TOOL || (message instanceof AssistantMessage assistant && assistant.hasToolCalls())) {
			throw new IllegalArgumentException("saveAll takes user, system and assistant text; tool calls and their results are"
					+ " written by ReplyStream.converse as tool.call and tool.result events");
		}
		return new AiEvents.MemoryMessage(type.name().toLowerCase(Locale.ROOT), String.valueOf(message.getText()));
	}

}
