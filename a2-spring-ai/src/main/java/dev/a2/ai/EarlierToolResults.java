package dev.a2.ai;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

import dev.a2.ConsumerContext;
import dev.a2.Event;
import dev.a2.HistoryPage;
import dev.a2.Session;
import org.jspecify.annotations.Nullable;

/**
 * The results that earlier attempts of a reply stored for the calls of tools that need no approval,
 * by the call's step, tool and arguments. A new attempt (a run taken over after a crash) asks the
 * model again, and the model makes the same call under a new id: without these the tool ran again,
 * and an effect keyed by the call's id was applied twice.
 */
final class EarlierToolResults {

	private static final EarlierToolResults NONE = new EarlierToolResults(Map.of());

	private final Map<String, Deque<String>> results;

	private EarlierToolResults(Map<String, Deque<String>> results) {
		this.results = results;
	}

	/** Read from the events after the run's trigger, once per run, and only in an attempt after the first. */
	static EarlierToolResults of(ConsumerContext context, ReplyWriter writer) {
		if (writer.attempt() <= 1) {
			return NONE;
		}
		Map<String, AiEvents.ToolCall> calls = new HashMap<>();
		Map<String, Deque<String>> results = new HashMap<>();
		long after = context.event().index();
		while (true) {
			HistoryPage page = context.session().history(after, Session.MAX_HISTORY_LIMIT);
			for (Event event : page.events()) {
				after = event.index();
				if (event.payload() instanceof AiEvents.ToolCall call && call.replyTo() == writer.replyTo()
						&& call.attempt() < writer.attempt()) {
					calls.put(call.attempt() + "/" + call.callId(), call);
				}
				else if (event.payload() instanceof AiEvents.ToolResult result && result.replyTo() == writer.replyTo()
						&& result.attempt() < writer.attempt() && !result.rejected()) {
					AiEvents.ToolCall call = calls.get(result.attempt() + "/" + result.callId());
					if (call != null) {
						results.computeIfAbsent(key(call.step(), call.name(), call.arguments()), (key) -> new ArrayDeque<>())
							.add(result.result());
					}
				}
			}
			if (page.events().isEmpty() || after >= page.head()) {
				return new EarlierToolResults(results);
			}
		}
	}

	/** The result an earlier attempt stored for the same call, taken so that a second like call runs. */
	@Nullable String take(int step, String name, String arguments) {
		Deque<String> stored = this.results.get(key(step, name, arguments));
		return (stored != null) ? stored.poll() : null;
	}

	private static String key(int step, String name, String arguments) {
		return step + "/" + name + "/" + arguments;
	}

}
