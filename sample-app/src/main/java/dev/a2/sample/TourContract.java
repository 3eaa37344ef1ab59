package dev.a2.sample;

import dev.a2.Contract;
import dev.a2.Reducer;
import dev.a2.ai.AiEvents;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The contract of the tour: what a chat room's log may hold, its presence fields, and how it folds
 * into state. Adding the starter, a DataSource and this bean is all A2 needs.
 */
@Configuration(proxyBeanMethods = false)
class TourContract {

	/** A participant's message; {@code thread} is the conversation the assistant answers in order. */
	record MessageSent(@NotBlank @Size(max = 2000) String text, @NotBlank @Size(max = 64) String author,
			@NotBlank @Size(max = 64) String thread) {
	}

	/** A participant asks the assistant to stop replying in {@code thread}. */
	record StopRequested(@NotBlank @Size(max = 64) String thread) {
	}

	/** The delivery consumer handed the message at {@code index} on. */
	record MessageDelivered(@Positive long index) {
	}

	/** The state a client can ask for with {@code ?state=summary}. */
	record Summary(int messages, int replies, String lastMessage) {
	}

	/**
	 * The assistant's events ({@code reply.*}, {@code tool.*}) come from {@link AiEvents}, with the
	 * reducer that folds the room into the conversation the model is sent: each message is a user's
	 * turn, written as {@code author: text}.
	 */
	@Bean
	Contract chat() {
		Contract.Builder chat = Contract.builder("chat")
			.event("message.sent", MessageSent.class)
			.event("stop.requested", StopRequested.class)
			.event("message.delivered", MessageDelivered.class)
			// the delivery's events: written by a consumer, never pushed by a browser (AiEvents marks the
			// assistant's own so)
			.serverOnly("message.delivered")
			.presence("online", Boolean.class)
			.presence("typing", Boolean.class)
			.reducer("summary", Reducer.of(Summary.class, new Summary(0, 0, ""), (summary, event) -> switch (event.type()) {
				case "message.sent" -> {
					MessageSent sent = event.payload(MessageSent.class);
					yield new Summary(summary.messages() + 1, summary.replies(), sent.author() + ": " + sent.text());
				}
				case "reply.completed" -> new Summary(summary.messages(), summary.replies() + 1, summary.lastMessage());
				default -> summary;
			}));
		return AiEvents.register(chat, (event) -> (event.payload() instanceof MessageSent message)
				? message.author() + ": " + message.text() : null)
			.build();
	}

}
