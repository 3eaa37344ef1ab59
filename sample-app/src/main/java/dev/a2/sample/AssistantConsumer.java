package dev.a2.sample;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.ai.AiEvents;
import dev.a2.ai.Assistant;
import dev.a2.ai.ReplyStream;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.sample.TourContract.StopRequested;

import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An assistant on Spring AI that answers messages mentioning {@code @assistant}: the room's
 * conversation (folded from its events) is sent to the model, and {@link ReplyStream} streams the
 * answer into the room, coalesced, attempt-safe and stoppable. A {@code stop.requested} in the same
 * thread aborts the reply and cancels the model's stream; asking for a pizza calls a tool that waits
 * for a person's {@code tool.approved}, and a Stop while it waits ends that reply.
 * <p>
 * It is declared as a {@link Consumer} bean rather than with {@code @A2Consumer} because its
 * {@code abortOn} needs a predicate, and its lane key a function: each thread is a keyed lane, so the
 * replies of one thread come one after another while threads are answered at once; the answers to
 * tool approvals share a lane of their own.
 * <p>
 * The model is Spring AI's {@link ChatModel} bean: with {@code spring.ai.openai.api-key} set, OpenAI's
 * (the sample carries its starter); without, the sample's
 * {@link OfflineChatModel}, so the tour needs no key and no network.
 */
@Configuration(proxyBeanMethods = false)
class AssistantConsumer {

	static final String MENTION = "@assistant";

	private final AtomicInteger pizzas = new AtomicInteger();

	@Bean
	@ConditionalOnExpression("'${spring.ai.openai.api-key:}'.isEmpty()")
	ChatModel offlineChatModel(@Value("${sample.assistant.token-delay:120ms}") Duration tokenDelay) {
		return new OfflineChatModel(tokenDelay);
	}

	@Bean
	Consumer assistant(ChatModel model, ReplyStream replies) {
		Assistant assistant = Assistant.builder(model)
			.system("You are the assistant of a chat room. Each user message starts with its author's name. Answer briefly.")
			.tools(pizzaTool())
			.approvalRequired(OfflineChatModel.PIZZA_TOOL)
			.build();
		return Consumer.builder("chat", "assistant")
			// a Stop is taken too: a reply waiting for a person's approval has no run for it to abort, so the
			// Stop's own run ends that reply (ReplyStream.converse)
			.types("message.sent", AiEvents.TOOL_APPROVED, AiEvents.TOOL_REJECTED, "stop.requested")
			// approvals and Stops on a lane of their own, one at a time: two approvals of one call (two devices)
			// must not both find it unanswered and order two pizzas, nor an approval and a Stop both act on it
			.lane(Lane.keyed((input) -> (input.payload() instanceof MessageSent message) ? message.thread() : "approvals"))
			.abortOn("stop.requested", (trigger, stop) -> trigger.payload() instanceof MessageSent message
					&& message.thread().equals(stop.payload(StopRequested.class).thread()))
			.run((context) -> {
				if (mentionsTheAssistant(context.event()) || !(context.event().payload() instanceof MessageSent)) {
					replies.converse(context, assistant);
				}
				return null;
			});
	}

	private static boolean mentionsTheAssistant(Event event) {
		return event.payload() instanceof MessageSent message && message.text().toLowerCase(Locale.ROOT).contains(MENTION);
	}

	/** A tool with an effect a person should agree to first. */
	private ToolCallback pizzaTool() {
		return new ToolCallback() {

			@Override
			public ToolDefinition getToolDefinition() {
				return ToolDefinition.builder()
					.name(OfflineChatModel.PIZZA_TOOL)
					.description("Orders a pizza for the room")
					.inputSchema("{\"type\":\"object\",\"properties\":{\"size\":{\"type\":\"string\"},\"topping\":{\"type\":\"string\"}}}")
					.build();
			}

			@Override
			public String call(String toolInput) {
				return "Pizza order #" + AssistantConsumer.this.pizzas.incrementAndGet() + " placed (" + toolInput + ").";
			}

		};
	}

	/** Used by the tests: the offline model's answer to a message. */
	static List<String> tokens(MessageSent message) {
		return OfflineChatModel.tokens(message.author(), message.text());
	}

}
