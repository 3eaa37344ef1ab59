package dev.a2.sample;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.a2.ConsumerContext;
import dev.a2.NewEvent;
import dev.a2.sample.ChatContract.MessageSent;
import dev.a2.spring.A2Consumer;

import org.springframework.stereotype.Component;

/**
 * The sample's consumers: a bot that answers mentions (one reply at a time per room), and a
 * projection that counts the words of each room.
 */
@Component
class ChatConsumers {

	private final Map<String, Integer> words = new ConcurrentHashMap<>();

	/** Answers messages that mention @bot; its reply is appended when the run completes, exactly once. */
	@A2Consumer(contract = "chat", name = "bot", types = "message.sent", laneKey = "#session")
	NewEvent answer(MessageSent message, ConsumerContext context) {
		if (!message.text().contains("@bot") || message.author().equals("bot")) {
			return null;
		}
		context.signal().throwIfAborted();
		return NewEvent.of("message.sent", new MessageSent("you said: " + message.text().replace("@bot", "").trim(), "bot"));
	}

	/** A projection: one cursor per room walks its messages in order. */
	@A2Consumer(contract = "chat", name = "word-count", types = "message.sent", lane = "word-count", backfill = true)
	void count(MessageSent message, ConsumerContext context) {
		this.words.merge(context.session().id(), message.text().split("\\s+").length, Integer::sum);
	}

	int words(String room) {
		return this.words.getOrDefault(room, 0);
	}

}
