package dev.a2.sample;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.ConsumerContext;
import dev.a2.NewEvent;
import dev.a2.NonRetriableException;
import dev.a2.sample.TourContract.MessageDelivered;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.spring.A2Consumer;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Hands every message on (think of mail or a push notification) and marks it delivered. It is
 * deliberately flaky: it refuses messages holding the refused word, so a dead letter can be seen
 * in the operator console, blocking the room's deliveries until an operator retries (once the word
 * is allowed) or skips it. Its lane is fixed: one cursor per room, delivering in order.
 */
@Component
class Delivery {

	private final AtomicReference<String> refusedWord;

	Delivery(@Value("${sample.delivery.refused-word:kaboom}") String refusedWord) {
		this.refusedWord = new AtomicReference<>(refusedWord);
	}

	@A2Consumer(contract = "chat", name = "delivery", types = "message.sent", lane = "delivery")
	NewEvent deliver(MessageSent message, ConsumerContext context) {
		String refused = this.refusedWord.get();
		if (!refused.isEmpty() && message.text().toLowerCase(Locale.ROOT).contains(refused)) {
			// not worth nine more tries: dead-lettered at once
			throw new NonRetriableException("delivery refused: the message holds the word '" + refused + "'");
		}
		return NewEvent.of("message.delivered", new MessageDelivered(context.event().index()));
	}

	String refusedWord() {
		return this.refusedWord.get();
	}

	/** An empty word refuses nothing. */
	void refuse(String word) {
		this.refusedWord.set(word.trim().toLowerCase(Locale.ROOT));
	}

}
