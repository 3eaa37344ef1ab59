package dev.a2.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

import javax.sql.DataSource;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiEvents;
import dev.a2.ai.ReplySettings;
import dev.a2.ai.ReplyStream;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import reactor.core.publisher.Flux;

/**
 * Rows a model's reply costs: a 500-token answer streamed at 50 tokens/s through {@link ReplyStream}
 * with the default flush (50 ms or 64 chunks), beside the same answer written a row per token.
 */
final class AiBenchmarks {

	private static final int TOKENS = 500;

	private static final Duration TOKEN_DELAY = Duration.ofMillis(20);

	record Asked(String text) {
	}

	private final DataSource dataSource;

	AiBenchmarks(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	void run(Table table) throws InterruptedException {
		long perToken = deltaRows(ReplySettings.DEFAULTS.withFlush(Duration.ofMillis(50), 1));
		for (Duration interval : List.of(Duration.ofMillis(50), Duration.ofMillis(250))) {
			long coalesced = deltaRows(ReplySettings.DEFAULTS.withFlush(interval, 64));
			table.row("AI reply: reply.delta rows per " + TOKENS + "-token reply at 50 tokens/s, flush-interval "
					+ interval.toMillis() + " ms (baseline: a row per token)", Long.toString(coalesced), Long.toString(perToken),
					String.format(Locale.ROOT, "%.2f", (double) coalesced / perToken));
		}
	}

	private long deltaRows(ReplySettings settings) throws InterruptedException {
		ReplyStream replies = new ReplyStream(settings);
		ChatModel model = new PacedModel();
		Contract.Builder contract = Contract.builder("ai-bench").event("asked", Asked.class);
		AiEvents.register(contract);
		try (A2Server server = A2Server.builder()
			.dataSource(this.dataSource)
			.contract(contract.build())
			.consumer(Consumer.builder("ai-bench", "assistant").types("asked").run((context) -> {
				replies.stream(context, model.stream(new Prompt("go")));
				return null;
			}))
			.build()) {
			Session session = server.session("ai-bench", "reply-" + System.nanoTime());
			session.append(NewEvent.of("asked", new Asked("a long answer, please")));
			long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
			while (events(session).stream().noneMatch((event) -> event.type().equals(AiEvents.REPLY_COMPLETED))) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("the reply did not complete within 2 minutes");
				}
				Thread.sleep(100);
			}
			return events(session).stream().filter((event) -> event.type().equals(AiEvents.REPLY_DELTA)).count();
		}
	}

	private static List<Event> events(Session session) {
		return session.history(0, 1000).events();
	}

	/** Streams {@value #TOKENS} tokens, one every 20 ms, as a model at 50 tokens/s would. */
	private static final class PacedModel implements ChatModel {

		@Override
		public ChatResponse call(Prompt prompt) {
			throw new UnsupportedOperationException("streams only");
		}

		@Override
		public Flux<ChatResponse> stream(Prompt prompt) {
			return Flux.interval(TOKEN_DELAY)
				.take(TOKENS)
				.map((i) -> new ChatResponse(List.of(new Generation(new AssistantMessage("token" + i + " ")))));
		}

	}

}
