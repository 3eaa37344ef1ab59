package dev.a2.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.metadata.ChatGenerationMetadata;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import reactor.core.publisher.Flux;

/**
 * The sample's model when no real one is configured, so the tour needs no key and no network: it
 * streams a canned answer to the latest user message, one word per {@code tokenDelay}, and asks for
 * the {@code order_pizza} tool when the message mentions a pizza. Its stream is cancellable like a
 * provider's: a stop ends it.
 */
final class OfflineChatModel implements ChatModel {

	static final String PIZZA_TOOL = "order_pizza";

	private final Duration tokenDelay;

	OfflineChatModel(Duration tokenDelay) {
		this.tokenDelay = tokenDelay;
	}

	@Override
	public ChatResponse call(Prompt prompt) {
		String text = String.join("", answer(prompt.getInstructions()));
		return new ChatResponse(List.of(new Generation(new AssistantMessage(text))));
	}

	@Override
	public Flux<ChatResponse> stream(Prompt prompt) {
		List<Message> messages = prompt.getInstructions();
		Message last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
		if (last instanceof UserMessage user && user.getText().toLowerCase(Locale.ROOT).contains("pizza")) {
			return orderPizza(user, messages.size());
		}
		UserMessage secondPizza = secondPizza(messages);
		if (secondPizza != null) {
			return orderPizza(secondPizza, messages.size());
		}
		List<String> tokens = answer(messages);
		// one word per tick, on Reactor's timer: a cancelled subscription stops the ticks
		return Flux.interval(this.tokenDelay)
			.take(tokens.size())
			.map((i) -> new ChatResponse(List.of(new Generation(new AssistantMessage(tokens.get(i.intValue()))))));
	}

	private static Flux<ChatResponse> orderPizza(UserMessage asked, int messages) {
		AssistantMessage call = AssistantMessage.builder()
			.content("")
			.toolCalls(List.of(new AssistantMessage.ToolCall("pizza-" + Integer.toHexString(asked.getText().hashCode())
					+ "-" + messages, "function", PIZZA_TOOL, "{\"size\":\"large\",\"topping\":\"margherita\"}")))
			.build();
		return Flux.just(new ChatResponse(List.of(new Generation(call,
				ChatGenerationMetadata.builder().finishReason("TOOL_CALLS").build()))));
	}

	/**
	 * The message that asked for "two pizzas", when the first was ordered since and the second not
	 * yet: the model then asks for the tool again, in the run of the first approval, as a real model
	 * does that calls one tool at a time, and the reply waits for a person a second time.
	 */
	private static @Nullable UserMessage secondPizza(List<Message> messages) {
		int answers = 0;
		for (int i = messages.size() - 1; i >= 0; i--) {
			Message message = messages.get(i);
			if (message instanceof ToolResponseMessage tool) {
				for (ToolResponseMessage.ToolResponse response : tool.getResponses()) {
					if (!response.name().equals(PIZZA_TOOL) || !response.responseData().startsWith("Pizza order #")) {
						return null;
					}
					answers++;
				}
			}
			else if (message instanceof UserMessage user) {
				return (answers == 1 && user.getText().toLowerCase(Locale.ROOT).contains("two pizzas")) ? user : null;
			}
		}
		return null;
	}

	static List<String> answer(List<Message> messages) {
		Message last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
		if (last instanceof ToolResponseMessage tool) {
			String result = tool.getResponses().get(0).responseData();
			return words(result.startsWith("A person rejected") ? "No pizza then. " + result
					: "Done: " + result + " Enjoy it!");
		}
		String said = (last != null) ? String.valueOf(last.getText()) : "";
		int colon = said.indexOf(": ");
		String author = (colon > 0) ? said.substring(0, colon) : "there";
		return tokens(author, (colon > 0) ? said.substring(colon + 2) : said);
	}

	/** The canned answer to {@code author}'s {@code text}, in tokens that keep their spaces, as a model's stream would. */
	static List<String> tokens(String author, String text) {
		String question = text.replaceAll("(?i)" + AssistantConsumer.MENTION, "").trim();
		return words("Hello " + author + ". You asked: \u201c" + (question.isEmpty() ? "nothing yet" : question)
				+ "\u201d. I answer as a model would, a few words at a time: they reach this room as reply.delta events,"
				+ " coalesced per flush, so every browser sees the answer grow. If this server died now, another"
				+ " instance would take the reply over and start it again, and your page would drop these words for"
				+ " the new ones. Press stop and a stop.requested event cancels my stream where it stands. Ask me to"
				+ " order a pizza to see a tool that waits for your approval.");
	}

	private static List<String> words(String text) {
		List<String> tokens = new ArrayList<>();
		for (String word : text.split("(?<= )")) {
			tokens.add(word);
		}
		return tokens;
	}

}
