package dev.a2.ai;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.metadata.ChatGenerationMetadata;
import org.springframework.ai.chat.metadata.ChatResponseMetadata;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import reactor.core.publisher.Flux;

/**
 * A streaming model that answers each call from its script (a different answer per call), emitting
 * one chunk per token from a thread of its own, and that records its prompts and whether a
 * subscriber cancelled its stream.
 */
final class ScriptedModel implements ChatModel {

	/**
	 * One call's answer.
	 * @param hangAfter emits this many tokens, then emits nothing until cancelled (-1: never hangs)
	 * @param beforeToken called before token i is emitted, on the model's thread
	 */
	record Script(List<String> tokens, Duration delay, int hangAfter, List<AssistantMessage.ToolCall> toolCalls,
			@Nullable RuntimeException error, @Nullable IntConsumer beforeToken) {

		static Script answer(Duration delay, String... tokens) {
			return new Script(List.of(tokens), delay, -1, List.of(), null, null);
		}

		static Script hanging(int after, Duration delay, String... tokens) {
			return new Script(List.of(tokens), delay, after, List.of(), null, null);
		}

		static Script toolCall(String id, String name, String arguments) {
			return new Script(List.of(), Duration.ZERO, -1, List.of(new AssistantMessage.ToolCall(id, "function", name, arguments)),
					null, null);
		}

		static Script failing(RuntimeException error, String... tokens) {
			return new Script(List.of(tokens), Duration.ZERO, -1, List.of(), error, null);
		}

		Script beforeToken(IntConsumer hook) {
			return new Script(this.tokens, this.delay, this.hangAfter, this.toolCalls, this.error, hook);
		}

	}

	private final List<Script> scripts;

	private final AtomicInteger calls = new AtomicInteger();

	final List<Prompt> prompts = new CopyOnWriteArrayList<>();

	/** Counted down when a subscriber cancels a stream. */
	final CountDownLatch cancelled = new CountDownLatch(1);

	final AtomicInteger cancellations = new AtomicInteger();

	ScriptedModel(Script... scripts) {
		this.scripts = List.of(scripts);
	}

	int calls() {
		return this.calls.get();
	}

	@Override
	public ChatResponse call(Prompt prompt) {
		throw new UnsupportedOperationException("the tests stream");
	}

	/** Cold, as a provider's: the call is made (and counted) when the stream is subscribed to. */
	@Override
	public Flux<ChatResponse> stream(Prompt prompt) {
		return Flux.defer(() -> call(prompt, this.calls.getAndIncrement()));
	}

	private Flux<ChatResponse> call(Prompt prompt, int call) {
		this.prompts.add(prompt);
		if (call >= this.scripts.size()) {
			return Flux.error(new IllegalStateException("the script has " + this.scripts.size() + " calls, this is call " + (call + 1)));
		}
		Script script = this.scripts.get(call);
		return Flux.create((sink) -> {
			CountDownLatch stop = new CountDownLatch(1);
			Thread emitter = new Thread(() -> {
				try {
					for (int i = 0; i < script.tokens().size(); i++) {
						if (i == script.hangAfter()) {
							stop.await(60, TimeUnit.SECONDS);
							return;
						}
						if (script.beforeToken() != null) {
							script.beforeToken().accept(i);
						}
						if (!script.delay().isZero()) {
							// stands in for the model's latency between tokens
							Thread.sleep(script.delay().toMillis());
						}
						if (stop.getCount() == 0) {
							return;
						}
						sink.next(new ChatResponse(List.of(new Generation(new AssistantMessage(script.tokens().get(i))))));
					}
					if (script.error() != null) {
						sink.error(script.error());
						return;
					}
					AssistantMessage last = AssistantMessage.builder().content("").toolCalls(script.toolCalls()).build();
					ChatGenerationMetadata finish = ChatGenerationMetadata.builder()
						.finishReason(script.toolCalls().isEmpty() ? "STOP" : "TOOL_CALLS")
						.build();
					sink.next(new ChatResponse(List.of(new Generation(last, finish)),
							ChatResponseMetadata.builder().usage(new DefaultUsage(7, script.tokens().size())).build()));
					sink.complete();
				}
				catch (InterruptedException ex) {
					// cancelled
				}
			}, "scripted-model-" + call);
			sink.onCancel(() -> {
				this.cancellations.incrementAndGet();
				this.cancelled.countDown();
				stop.countDown();
			});
			emitter.start();
		});
	}

	static String[] words(String text) {
		List<String> tokens = new ArrayList<>();
		for (String word : text.split("(?<= )")) {
			tokens.add(word);
		}
		return tokens.toArray(String[]::new);
	}

}
