package dev.a2;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.validation.constraints.Size;

/**
 * The contracts the tests use: a chat with messages, orders with nested items, and free notes.
 */
public final class TestContracts {

	/** How many times the reducers of {@link #chat()} have folded an event, over all servers. */
	public static final AtomicInteger folds = new AtomicInteger();

	private TestContracts() {
	}

	public record MessageSent(@NotBlank String text, @Size(max = 20) String author) {
	}

	public record Item(@NotBlank String sku, @Positive BigDecimal price) {
	}

	public record OrderPlaced(@NotEmpty List<@Valid Item> items) {
	}

	public record Note(String text) {
	}

	public record Cursor(@PositiveOrZero int line, @PositiveOrZero int column) {
	}

	public record Transcript(List<String> lines) {
	}

	public static Contract chat() {
		return Contract.builder("chat")
			.event("message.sent", MessageSent.class)
			.event("order.placed", OrderPlaced.class)
			.event("note", Note.class)
			.presence("typing", Boolean.class)
			.presence("cursor", Cursor.class)
			.reducer("count", Reducer.of(Integer.class, 0, (count, event) -> {
				folds.incrementAndGet();
				return count + 1;
			}))
			// folds in place, as JavaScript-minded code often does: A2 must still never share state
			.reducer("transcript", Reducer.of(Transcript.class, new Transcript(new ArrayList<>()), (transcript, event) -> {
				if (event.payload() instanceof MessageSent sent) {
					transcript.lines().add(event.index() + ":" + sent.text());
				}
				return transcript;
			}))
			.build();
	}

	public static NewEvent message(String text) {
		return NewEvent.of("message.sent", new MessageSent(text, "ann"));
	}

	public static NewEvent message(String text, String id) {
		return NewEvent.of("message.sent", new MessageSent(text, "ann"), id);
	}

	public static NewEvent note(String text) {
		return NewEvent.of("note", new Note(text));
	}

	/** Blocks a consumer run the way a long call would, until its attempt is aborted (or a minute passes). */
	public static void blockUntilAborted() {
		try {
			new CountDownLatch(1).await(60, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			// the abort interrupts the run's thread
		}
	}

}
