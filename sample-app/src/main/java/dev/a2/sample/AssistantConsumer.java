package dev.a2.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.a2.Consumer;
import dev.a2.ConsumerContext;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.sample.TourContract.ReplyCompleted;
import dev.a2.sample.TourContract.ReplyDelta;
import dev.a2.sample.TourContract.StopRequested;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An assistant that answers messages mentioning {@code @assistant}, streaming its reply as
 * {@code reply.delta} events and ending it with {@code reply.completed}; a {@code stop.requested}
 * in the same thread aborts the reply.
 * <p>
 * It is declared as a {@link Consumer} bean rather than with {@code @A2Consumer} because its
 * {@code abortOn} needs a predicate, and its lane key a function: each thread is a keyed lane, so the
 * replies of one thread come one after another while threads are answered at once. Tokens are
 * appended with {@code session().append}, whose ids derive from the trigger, so a reply run again
 * after a crash writes none of them twice.
 */
@Configuration(proxyBeanMethods = false)
class AssistantConsumer {

	static final String MENTION = "@assistant";

	@Bean
	Consumer assistant(@Value("${sample.assistant.token-delay:120ms}") Duration tokenDelay) {
		return Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed((input) -> ((MessageSent) input.payload()).thread()))
			.abortOn("stop.requested", (trigger, stop) -> trigger.payload(MessageSent.class)
				.thread()
				.equals(stop.payload(StopRequested.class).thread()))
			.run((context) -> reply(context, tokenDelay));
	}

	private static NewEvent reply(ConsumerContext context, Duration tokenDelay) throws InterruptedException {
		MessageSent message = context.event().payload(MessageSent.class);
		if (!message.text().toLowerCase(Locale.ROOT).contains(MENTION)) {
			return null;
		}
		long replyTo = context.event().index();
		List<String> tokens = tokens(message);
		for (int i = 0; i < tokens.size(); i++) {
			context.signal().throwIfAborted();
			context.session().append("token-" + i, NewEvent.of("reply.delta", new ReplyDelta(message.thread(), replyTo, tokens.get(i))));
			// stands in for a model's latency; an abort interrupts it
			Thread.sleep(tokenDelay.toMillis());
		}
		return NewEvent.of("reply.completed", new ReplyCompleted(message.thread(), replyTo));
	}

	/** A canned answer, in tokens that keep their spaces, as a model's stream would. */
	static List<String> tokens(MessageSent message) {
		String question = message.text().replaceAll("(?i)" + MENTION, "").trim();
		String answer = "Hello " + message.author() + ". You asked: \u201c" + (question.isEmpty() ? "nothing yet" : question)
				+ "\u201d. I answer one token at a time: each token is a reply.delta event, appended the moment it is"
				+ " written, so every browser in the room sees it at once. The ids of these events are derived from your"
				+ " message, so if this server died now, the reply would be taken over by another instance and no token"
				+ " would appear twice. Press stop and a stop.requested event ends this reply where it stands.";
		List<String> tokens = new ArrayList<>();
		for (String word : answer.split("(?<= )")) {
			tokens.add(word);
		}
		return tokens;
	}

}
