package dev.a2.ai;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.a2.A2Exception;
import dev.a2.Consumer;
import dev.a2.ConsumerContext;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.HistoryPage;
import dev.a2.ai.AiEvents.TokenUsage;
import dev.a2.ai.Conversation.ToolCallEntry;
import dev.a2.ai.Conversation.Turn;
import dev.a2.store.StorableText;
import dev.a2.wire.Wire;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.metadata.Usage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Streams a model's reply into the session of a consumer run, so that it survives a crash and stops
 * for real:
 * <ul>
 * <li>the text goes out as {@code reply.delta} events, one per flush (the first chunk at once, then
 * every {@link ReplySettings#flushInterval()} or {@link ReplySettings#flushTokens()} chunks);</li>
 * <li>ids are derived from the trigger, the attempt and a sequence, and a later attempt first
 * appends {@code reply.restarted}, so the stored reply is exactly one attempt's text;</li>
 * <li>one end event: {@code reply.completed}, {@code reply.stopped} (an {@code abortOn} event
 * aborted the run: the model's stream is cancelled) or {@code reply.failed};</li>
 * <li>{@link #converse} runs tool calls ({@code tool.call}, {@code tool.result}) and ends the run
 * with {@code tool.approval.requested} for a tool that needs a person; the run of the later
 * {@code tool.approved} / {@code tool.rejected} event continues the conversation, and the run of a
 * Stop that comes first ends the reply {@code reply.stopped};</li>
 * <li>every end carries the {@code usage} of the run's model calls that reported it;</li>
 * <li>the assistant's presence shows {@code thinking}, {@code streaming}, then {@code idle}.</li>
 * </ul>
 * Call it from the run's thread. An abort that is not a stop (the attempt was superseded or its
 * lease lapsed) writes nothing more and rethrows the reason: another attempt owns the reply now.
 */
public final class ReplyStream {

	private static final Log logger = LogFactory.getLog(ReplyStream.class);

	private static final Object END = new Object();

	private static final Object ABORT = new Object();

	/**
	 * The key of the tool call's id in the {@link ToolContext} a tool is called with. A call a new
	 * attempt makes again gets a new id from the model: key an effect by {@link #TOOL_EFFECT_KEY}.
	 */
	public static final String TOOL_CALL_ID = "a2.callId";

	/**
	 * The key, in the {@link ToolContext} a tool is called with, of its effect's idempotency key: the
	 * same for the same call (tool, arguments, step, and which of its like in the step) in every
	 * attempt of the reply, as a tool runs again when its run is taken over after a crash before its
	 * result was stored; and for an approved call, whichever attempt runs it. A UUID, 36 characters.
	 */
	public static final String TOOL_EFFECT_KEY = "a2.effectKey";

	/** The key of the session's id in the {@link ToolContext} a tool is called with. */
	public static final String TOOL_SESSION_ID = "a2.sessionId";

	/** What the model is told of a call that waited for approval when a Stop ended its reply. */
	static final String STOPPED_ANSWER = "A person stopped the reply before this tool call was approved: it did not run.";

	private final ReplySettings settings;

	/** The consumers ({@code contract/name}) told that their Stops leave a reply waiting for approval. */
	private final Set<String> warnedOfStops = ConcurrentHashMap.newKeySet();

	public ReplyStream(ReplySettings settings) {
		this.settings = Objects.requireNonNull(settings, "settings");
	}

	public ReplySettings settings() {
		return this.settings;
	}

	/** The conversation as of the run's trigger (its user message included), as Spring AI messages. */
	public static List<Message> conversation(ConsumerContext context) {
		return ((Conversation) context.session().state(AiEvents.CONVERSATION).state()).messages();
	}

	/** Streams one model call's answer into the session; an attempt after the first starts the reply over. */
	public ReplyOutcome stream(ConsumerContext context, Flux<ChatResponse> responses) {
		return stream(context, (partial) -> responses, false);
	}

	/**
	 * Streams one model call's answer into the session. With {@code continuePartial}, an attempt
	 * after the first does not start over: {@code responses} is given the text the earlier attempt
	 * stored (to pass to the model as the beginning of its answer), and what it streams is appended to
	 * it. Without, {@code responses} is given the empty string.
	 */
	public ReplyOutcome stream(ConsumerContext context, Function<String, Flux<ChatResponse>> responses,
			boolean continuePartial) {
		ReplyWriter writer = new ReplyWriter(context, this.settings);
		Turn earlier = earlierAttempt(context, writer);
		if (earlier != null && earlier.end() != null) {
			return ended(earlier);
		}
		ReplyOutcome stopped = stoppedBeforeThisAttempt(context, writer, earlier);
		if (stopped != null) {
			return stopped;
		}
		String partial = (earlier != null && continuePartial) ? earlier.text() : "";
		claim(context, writer, earlier, partial);
		writer.activity("thinking");
		try {
			Step step = streamStep(context, Flux.defer(() -> responses.apply(partial)), writer);
			return end(context, writer, step, partial + step.text);
		}
		finally {
			writer.activity("idle");
		}
	}

	/**
	 * Answers the run's trigger with {@code assistant}: the conversation through the trigger is sent
	 * to the model, its tool calls run (or wait for approval), and the answer streams into the
	 * session. When the trigger is a {@code tool.approved} or {@code tool.rejected} event, the tool
	 * runs (or not) and the conversation continues from it. When it is a Stop (a type of the consumer's
	 * {@code abortOn}), the model is not asked: a reply that waits for approval ends stopped, its
	 * waiting calls answered as stopped.
	 */
	public ReplyOutcome converse(ConsumerContext context, Assistant assistant) {
		warnOfStopsNotTaken(context, assistant);
		if (isStop(context)) {
			return stopWaiting(context);
		}
		ReplyWriter writer = new ReplyWriter(context, this.settings);
		Turn earlier = earlierAttempt(context, writer);
		if (earlier != null && earlier.end() != null) {
			return ended(earlier);
		}
		ReplyOutcome stopped = stoppedBeforeThisAttempt(context, writer, earlier);
		if (stopped != null) {
			return stopped;
		}
		claim(context, writer, earlier, "");
		Conversation conversation = (Conversation) context.session().state(AiEvents.CONVERSATION).state();
		writer.activity("thinking");
		try {
			Event trigger = context.event();
			if (trigger.payload() instanceof AiEvents.ToolApproved approved) {
				conversation = answerApproval(context, assistant, writer, conversation, approved.callId(), null);
			}
			else if (trigger.payload() instanceof AiEvents.ToolRejected rejected) {
				String reason = (rejected.reason() != null) ? rejected.reason() : "no reason given";
				conversation = answerApproval(context, assistant, writer, conversation, rejected.callId(), reason);
			}
			if (conversation == null) {
				return new ReplyOutcome(ReplyOutcome.Ending.NONE, "");
			}
			List<Message> messages = new ArrayList<>();
			if (assistant.system() != null) {
				messages.add(new SystemMessage(assistant.system()));
			}
			messages.addAll(conversation.messages());
			StringBuilder text = new StringBuilder();
			ChatOptions options = options(assistant);
			Set<String> callIds = new HashSet<>();
			EarlierToolResults earlierResults = null;
			// every model call of the run is billed, those that asked for tools too: the reply's usage sums them
			TokenUsage usage = null;
			while (true) {
				Prompt prompt = new Prompt(List.copyOf(messages), options);
				// a model that throws rather than answer a failing stream (one that cannot stream at all:
				// ChatModel's own stream() throws) fails the reply as a failed stream does, and is not run again
				Step step = streamStep(context, Flux.defer(() -> assistant.model().stream(prompt)), writer);
				text.append(step.text);
				usage = plus(usage, step.usage);
				if (step.ending != ReplyOutcome.Ending.COMPLETED || step.toolCalls.isEmpty()) {
					step.usage = usage;
					return end(context, writer, step, text.toString());
				}
				if (writer.step() + 1 >= this.settings.maxSteps()) {
					failed(context, writer, "the model asked for tools " + this.settings.maxSteps() + " times in one run: a2.ai.max-steps reached",
							usage);
					return new ReplyOutcome(ReplyOutcome.Ending.FAILED, text.toString());
				}
				List<AssistantMessage.ToolCall> toolCalls = uniqueIds(step.toolCalls, conversation, callIds, writer);
				List<AiEvents.ToolCall> calls = toolCalls.stream()
					.map((call) -> new AiEvents.ToolCall(writer.replyTo(), writer.step(), writer.attempt(), call.id(), call.name(),
							call.arguments()))
					.toList();
				writer.toolCalls(calls);
				messages.add(AssistantMessage.builder().content(step.text).toolCalls(toolCalls).build());
				List<AiEvents.ToolApprovalRequested> waiting = new ArrayList<>();
				Map<String, Integer> alike = new HashMap<>();
				for (AssistantMessage.ToolCall call : toolCalls) {
					String malformed = assistant.needsApproval(call.name()) ? malformedArguments(call.arguments()) : null;
					if (malformed != null) {
						// no person is asked to approve what the tool could not read: the model is told, and may ask again
						String result = "The tool was not run and no person was asked: its arguments are not a JSON object ("
								+ malformed + ").";
						writer.toolResult(new AiEvents.ToolResult(writer.replyTo(), writer.step(), writer.attempt(), call.id(),
								call.name(), result, false));
						messages.add(toolResponse(call.id(), call.name(), result));
					}
					else if (assistant.needsApproval(call.name())) {
						// the run ends here: its first request carries what its model calls cost, the others nothing more
						waiting.add(new AiEvents.ToolApprovalRequested(writer.replyTo(), writer.step(), writer.attempt(), call.id(),
								call.name(), call.arguments(), waiting.isEmpty() ? usage : null));
					}
					else {
						String same = writer.step() + "/" + call.name() + "/" + call.arguments();
						String effectKey = context.effectKey("a2.tool/" + same + "/" + alike.merge(same, 1, Integer::sum));
						if (earlierResults == null) {
							earlierResults = EarlierToolResults.of(context, writer);
						}
						// a call an earlier attempt made and stored the result of is not run again: its effect happened
						String result = earlierResults.take(writer.step(), call.name(), call.arguments());
						if (result == null) {
							result = runTool(context, assistant, call.id(), effectKey, call.name(), call.arguments());
						}
						writer.toolResult(new AiEvents.ToolResult(writer.replyTo(), writer.step(), writer.attempt(), call.id(),
								call.name(), result, false));
						messages.add(toolResponse(call.id(), call.name(), result));
					}
				}
				if (!waiting.isEmpty()) {
					writer.approvalRequested(waiting);
					return new ReplyOutcome(ReplyOutcome.Ending.APPROVAL_REQUESTED, text.toString());
				}
				writer.nextStep();
			}
		}
		finally {
			writer.activity("idle");
		}
	}

	/**
	 * Runs (or rejects) the waiting call and appends its result; answers the conversation with the
	 * result, or {@code null} when the model is not to be called now: for a call that is unknown or
	 * answered already (an approval pushed twice), or while other calls of the same model answer still
	 * wait for a person.
	 */
	private static @Nullable Conversation answerApproval(ConsumerContext context, Assistant assistant, ReplyWriter writer,
			Conversation conversation, String callId, @Nullable String rejection) {
		Conversation now = headConversation(context);
		ToolCallEntry call = now.toolCall(callId);
		if (call == null || now.answered(callId)) {
			logger.info("Ignoring the answer to tool call '" + callId + "' in session '" + context.session().id() + "': "
					+ ((call == null) ? "the session has no such call" : "it was answered already"));
			return null;
		}
		// the approval's run may be taken over too; its trigger stays the same, so does the key
		String result = (rejection != null) ? "A person rejected this tool call: " + rejection
				: runTool(context, assistant, callId, context.effectKey("a2.tool/approved/" + callId), call.name(),
						call.arguments());
		writer.toolResult(new AiEvents.ToolResult(writer.replyTo(), writer.step(), writer.attempt(), callId,
				call.name(), result, rejection != null));
		Conversation after = headConversation(context);
		if (stoppedMeanwhile(after, callId)) {
			// on the independent lane a Stop's run answered the other waiting calls while this one ran the tool
			return null;
		}
		boolean othersWait = after.turns()
			.stream()
			.flatMap((turn) -> turn.entries().stream())
			.filter((entry) -> entry.toolCalls().stream().anyMatch((c) -> c.id().equals(callId)))
			.anyMatch((entry) -> !entry.toolCalls().stream().allMatch((c) -> after.answered(c.id())));
		// the conversation as of the trigger, with every answer given since: an approval pushed with this one
		// (an "approve all") was answered by the run before, after this trigger
		return othersWait ? null : conversation.withAnswersFrom(after);
	}

	/** Whether the reply that asked for call {@code callId} ended stopped: a Stop came while it waited. */
	private static boolean stoppedMeanwhile(Conversation conversation, String callId) {
		return conversation.turns()
			.stream()
			.filter((turn) -> turn.entries().stream().anyMatch((entry) -> entry.toolCalls().stream().anyMatch((c) -> c.id().equals(callId))))
			.anyMatch((turn) -> AiEvents.REPLY_STOPPED.equals(turn.end()));
	}

	/**
	 * Says once per consumer, at WARN, that its Stops cannot end a reply that waits for approval: the
	 * consumer aborts on a type it does not take, so no run of its comes for the Stop, and a reply that
	 * waits has no run to abort. Nothing fails meanwhile (the page shows the prompt still, and a later
	 * approval runs the tool), so the developer would not learn of it otherwise.
	 */
	private void warnOfStopsNotTaken(ConsumerContext context, Assistant assistant) {
		Consumer consumer = context.consumer();
		String key = consumer.contract() + "/" + consumer.name();
		if (!assistant.asksForApproval() || this.warnedOfStops.contains(key)) {
			return;
		}
		List<String> notTaken = consumer.abortOn()
			.stream()
			.map(Consumer.AbortOn::type)
			.filter((type) -> !consumer.takes(type))
			.distinct()
			.toList();
		if (!notTaken.isEmpty() && this.warnedOfStops.add(key)) {
			logger.warn("Consumer '" + consumer.name() + "' of contract '" + consumer.contract() + "' aborts on " + notTaken
					+ " but does not take " + ((notTaken.size() == 1) ? "it" : "them") + ": a Stop pressed while one of its"
					+ " replies waits for a person's approval leaves the reply waiting, and an approval pushed later still runs"
					+ " the tool. Add " + notTaken + " to its types, and ReplyStream.converse ends such a reply when the Stop"
					+ " comes (docs/ai-replies.md).");
		}
	}

	/** Whether the run's trigger is a Stop: an event of a type the consumer's {@code abortOn} names. */
	private static boolean isStop(ConsumerContext context) {
		String type = context.event().type();
		return context.consumer().abortOn().stream().anyMatch((abort) -> abort.type().equals(type));
	}

	/**
	 * The run of a Stop. A reply that is streaming was aborted by it already (the consumer's
	 * {@code abortOn}); one that ended waiting for a person's approval has no run to abort, so the
	 * Stop's own run ends it: each call that still waits is answered as stopped (a model must be sent
	 * an answer for every call it made, and an approval pushed later finds the call answered and runs
	 * nothing), and the reply ends {@code reply.stopped}. Every reply that still waits and that the Stop
	 * would have aborted, as the consumer's {@code abortOn} predicate says, ends so, in one append: a
	 * Stop when nothing waits changes nothing. The model is not called.
	 */
	private ReplyOutcome stopWaiting(ConsumerContext context) {
		Event stop = context.event();
		Conversation now = headConversation(context);
		Set<String> answered = now.answeredCalls();
		List<AiEvents.ToolResult> answers = new ArrayList<>();
		List<AiEvents.ReplyStopped> ends = new ArrayList<>();
		Turn latest = null;
		for (Turn waiting : waitingReplies(now, answered, stop)) {
			if (!stopsTheWaitingReply(context, now, waiting, stop)) {
				continue;
			}
			int step = 0;
			for (Conversation.Entry entry : waiting.entries()) {
				for (ToolCallEntry call : entry.toolCalls()) {
					if (!answered.contains(call.id())) {
						step = entry.step();
						answers.add(new AiEvents.ToolResult(stop.index(), 0, context.attempt(), call.id(), call.name(),
								STOPPED_ANSWER, true));
					}
				}
			}
			String reason = "event " + stop.index() + " of type '" + stop.type() + "' arrived while the reply waited for approval";
			// the approval request carried the run's usage: the stop, which calls no model, adds none
			ends.add(new AiEvents.ReplyStopped(waiting.replyTo(), step, waiting.attempt(), reason, null));
			latest = waiting;
		}
		if (latest == null) {
			return new ReplyOutcome(ReplyOutcome.Ending.NONE, "");
		}
		new ReplyWriter(context, this.settings).stoppedWaiting(answers, ends);
		return new ReplyOutcome(ReplyOutcome.Ending.STOPPED, latest.text());
	}

	/**
	 * The replies to events before {@code stop} that ended asking for approval and still have a call
	 * no one answered, in the order they began. They are found in the conversation the run folded
	 * already, so a Stop reads nothing of the replies that ended (a long session's thousands).
	 */
	private static List<Turn> waitingReplies(Conversation conversation, Set<String> answered, Event stop) {
		return conversation.turns()
			.stream()
			.filter((turn) -> turn.replyTo() > 0 && turn.replyTo() < stop.index()
					&& AiEvents.TOOL_APPROVAL_REQUESTED.equals(turn.end()))
			.filter((turn) -> turn.entries()
				.stream()
				.anyMatch((entry) -> entry.toolCalls().stream().anyMatch((call) -> !answered.contains(call.id()))))
			.toList();
	}

	/**
	 * Whether the Stop ends a reply that waits: the consumer took its trigger, and the Stop would have
	 * aborted the run of that trigger, or of the reply it continues. A reply to a {@code tool.approved}
	 * (or {@code tool.rejected}) event continues the reply that asked for the call, and waits again
	 * when the model asks for a tool again: an {@code abortOn} predicate that spares approvals' runs
	 * (an approval names no thread) still matches the message the conversation began with. The links
	 * are followed back to earlier events only, one read each.
	 */
	private static boolean stopsTheWaitingReply(ConsumerContext context, Conversation conversation, Turn waiting, Event stop) {
		Event trigger = eventAt(context, waiting.replyTo());
		if (trigger == null || !context.consumer().takes(trigger.type())) {
			return false;
		}
		while (!stops(context, trigger, stop)) {
			String callId = (trigger.payload() instanceof AiEvents.ToolApproved approved) ? approved.callId()
					: (trigger.payload() instanceof AiEvents.ToolRejected rejected) ? rejected.callId() : null;
			Turn asked = (callId != null) ? askedFor(conversation, callId) : null;
			if (asked == null || asked.replyTo() <= 0 || asked.replyTo() >= trigger.index()) {
				return false;
			}
			trigger = eventAt(context, asked.replyTo());
			if (trigger == null || !context.consumer().takes(trigger.type())) {
				return false;
			}
		}
		return true;
	}

	/** The reply that asked for call {@code callId}, or {@code null}. */
	private static @Nullable Turn askedFor(Conversation conversation, String callId) {
		for (Turn turn : conversation.turns()) {
			for (Conversation.Entry entry : turn.entries()) {
				if (entry.toolCalls().stream().anyMatch((call) -> call.id().equals(callId))) {
					return turn;
				}
			}
		}
		return null;
	}

	/** The session's event at {@code index}, or {@code null} when it is not there (cleared). */
	private static @Nullable Event eventAt(ConsumerContext context, long index) {
		HistoryPage page = context.session().history(index - 1, 1);
		return (page.events().isEmpty() || page.events().get(0).index() != index) ? null : page.events().get(0);
	}

	/** Whether the consumer's {@code abortOn} aborts the run of {@code trigger} for {@code stop}; a predicate that throws does not. */
	private static boolean stops(ConsumerContext context, Event trigger, Event stop) {
		for (Consumer.AbortOn abort : context.consumer().abortOn()) {
			if (!abort.type().equals(stop.type())) {
				continue;
			}
			try {
				if (abort.when().test(trigger, stop)) {
					return true;
				}
			}
			catch (RuntimeException ex) {
				logger.warn("The abort predicate of consumer '" + context.consumer().name() + "' failed on event " + stop.index()
						+ " for the reply to event " + trigger.index() + "; taken as not stopping it", ex);
			}
		}
		return false;
	}

	/**
	 * The options of the assistant's model calls: the model's own, with the assistant's tools, as
	 * Spring AI's {@code ChatClient} makes them. A provider reads only options of its own type (OpenAI's
	 * model casts them to {@code OpenAiChatOptions}, and fails the call otherwise), and its own carry
	 * the model name and settings it was configured with.
	 */
	private static ChatOptions options(Assistant assistant) {
		ChatOptions.Builder<?> own = assistant.model().getOptions().mutate();
		if (own instanceof ToolCallingChatOptions.Builder<?> tools) {
			return tools.toolCallbacks(assistant.tools()).build();
		}
		return ToolCallingChatOptions.builder().toolCallbacks(assistant.tools()).build();
	}

	/**
	 * Runs a tool with a {@link ToolContext} naming the call ({@link #TOOL_CALL_ID}), its effect's key
	 * ({@link #TOOL_EFFECT_KEY}) and the session ({@link #TOOL_SESSION_ID}): a tool runs at least once
	 * (again when a run is taken over before its result was stored), so one with an effect needs the
	 * key to apply it once, and a {@code @Tool} method that takes a {@code ToolContext} fails when it is
	 * called without one.
	 */
	private static String runTool(ConsumerContext context, Assistant assistant, String callId, String effectKey,
			String name, String arguments) {
		ToolCallback tool = assistant.tool(name);
		if (tool == null) {
			return "There is no tool named '" + name + "'.";
		}
		ToolContext toolContext = new ToolContext(
				Map.of(TOOL_CALL_ID, callId, TOOL_EFFECT_KEY, effectKey, TOOL_SESSION_ID, context.session().id()));
		try {
			// the result is stored as the model is sent it: a NUL (a tool reading a binary file) fails no reply
			return storable(readsToolContext(tool) ? tool.call(arguments, toolContext) : tool.call(arguments));
		}
		catch (RuntimeException ex) {
			// the model is told, as Spring AI's own tool execution does, and may try otherwise
			return StorableText.replacingUnstorable("The tool failed: " + ex.getMessage());
		}
	}

	/**
	 * Whether the tool overrides {@code call(String, ToolContext)}: Spring AI's default ignores the
	 * context and logs at INFO, on every call, that it did, so a tool that reads none is called
	 * without one.
	 */
	private static boolean readsToolContext(ToolCallback tool) {
		try {
			return tool.getClass().getMethod("call", String.class, ToolContext.class).getDeclaringClass() != ToolCallback.class;
		}
		catch (NoSuchMethodException ex) {
			return false;
		}
	}

	/**
	 * The model's calls, each with an id no other call of the session has. A2 keys a call's approval,
	 * its answer and its reply by its id; a model that gives the same id again (a local model numbering
	 * from {@code call_0} in every answer) made the approval of the later call run nothing, and its reply
	 * wait for ever. Such an id gets the reply, the step and the attempt after it: the model is sent the
	 * calls under the ids they are stored with, so its answers still match.
	 */
	private static List<AssistantMessage.ToolCall> uniqueIds(List<AssistantMessage.ToolCall> calls, Conversation conversation,
			Set<String> thisRun, ReplyWriter writer) {
		List<AssistantMessage.ToolCall> unique = new ArrayList<>(calls.size());
		for (AssistantMessage.ToolCall call : calls) {
			String id = call.id();
			if (id == null || id.isEmpty() || thisRun.contains(id) || conversation.toolCall(id) != null) {
				String base = (id == null || id.isEmpty()) ? "call" : id;
				id = base + "-" + writer.replyTo() + "-" + writer.step() + "-" + writer.attempt() + "-" + (unique.size() + 1);
			}
			thisRun.add(id);
			unique.add(new AssistantMessage.ToolCall(id, call.type(), call.name(), call.arguments()));
		}
		return unique;
	}

	/** Why a call's arguments are no JSON object, or {@code null} when they are one. */
	private static @Nullable String malformedArguments(String arguments) {
		try {
			JsonNode tree = JsonMapper.shared().readTree(arguments);
			if (tree != null && tree.isObject()) {
				return null;
			}
			return "they are " + ((tree == null || tree.isMissingNode()) ? "empty" : "a JSON " + tree.getNodeType().name().toLowerCase(Locale.ROOT));
		}
		catch (JacksonException ex) {
			return Wire.jacksonMessage(ex, "they cannot be read");
		}
	}

	private static ToolResponseMessage toolResponse(String callId, String name, String result) {
		return ToolResponseMessage.builder().responses(List.of(new ToolResponseMessage.ToolResponse(callId, name, result))).build();
	}

	private static Conversation headConversation(ConsumerContext context) {
		return (Conversation) context.session().state(AiEvents.CONVERSATION, Long.MAX_VALUE).state();
	}

	/**
	 * An attempt after the first claims the reply before the model is asked, with {@code reply.restarted}
	 * from the text it starts from, even when no earlier attempt's text is stored: an earlier attempt that
	 * stalled before its first token and wakes up later must write nothing a reader takes for the reply.
	 */
	private static void claim(ConsumerContext context, ReplyWriter writer, @Nullable Turn earlier, String from) {
		if (context.attempt() > 1) {
			writer.restarted((earlier != null) ? earlier.attempt() : context.attempt() - 1, from);
		}
	}

	/**
	 * Ends the reply an earlier attempt began when the Stop came while no attempt ran (its instance
	 * died mid-reply): this attempt starts aborted, and the reply ends stopped with the text the
	 * earlier attempt stored, as a Stop pressed while it streamed would have left it. The model is
	 * not asked. {@code null} when this attempt is to go on.
	 */
	private static @Nullable ReplyOutcome stoppedBeforeThisAttempt(ConsumerContext context, ReplyWriter writer,
			@Nullable Turn earlier) {
		A2Exception reason = context.signal().reason();
		if (earlier == null || reason == null || !stopsTheReply(context, reason)) {
			return null;
		}
		claim(context, writer, earlier, earlier.text());
		writer.stopped(reason.getMessage(), null);
		// the status the dead attempt showed would otherwise stay until the presence TTL
		writer.activity("idle");
		return new ReplyOutcome(ReplyOutcome.Ending.STOPPED, earlier.text());
	}

	/** The reply an earlier attempt of this run wrote, or {@code null} when there is none. */
	private static @Nullable Turn earlierAttempt(ConsumerContext context, ReplyWriter writer) {
		if (context.attempt() == 1) {
			return null;
		}
		Turn turn = headConversation(context).reply(writer.replyTo());
		return (turn != null && turn.attempt() < context.attempt()) ? turn : null;
	}

	private static ReplyOutcome ended(Turn turn) {
		ReplyOutcome.Ending ending = switch (String.valueOf(turn.end())) {
			case AiEvents.REPLY_COMPLETED -> ReplyOutcome.Ending.COMPLETED;
			case AiEvents.REPLY_STOPPED -> ReplyOutcome.Ending.STOPPED;
			case AiEvents.TOOL_APPROVAL_REQUESTED -> ReplyOutcome.Ending.APPROVAL_REQUESTED;
			default -> ReplyOutcome.Ending.FAILED;
		};
		return new ReplyOutcome(ending, turn.text());
	}

	private ReplyOutcome end(ConsumerContext context, ReplyWriter writer, Step step, String text) {
		switch (step.ending) {
			case COMPLETED -> writer.completed(step.finishReason, step.usage);
			case FAILED -> failed(context, writer, String.valueOf(step.error), step.usage);
			case STOPPED -> {
				A2Exception reason = Objects.requireNonNull(context.signal().reason());
				if (!stopsTheReply(context, reason)) {
					throw reason;
				}
				writer.stopped(reason.getMessage(), step.usage);
			}
			default -> throw new IllegalStateException("a step cannot end with " + step.ending);
		}
		return new ReplyOutcome(step.ending, text);
	}

	/**
	 * Ends the reply with {@code reply.failed}, and says so in the log on one line: the session's log
	 * tells the user, and an operator sees the provider's failures (a 429, a timeout) without reading
	 * sessions.
	 */
	private static void failed(ConsumerContext context, ReplyWriter writer, String error, @Nullable TokenUsage usage) {
		logger.warn("The reply to event " + writer.replyTo() + " of session '" + context.session().id() + "' (attempt "
				+ context.attempt() + ") failed: " + error);
		writer.failed(error, usage);
	}

	/**
	 * Whether an abort stops the reply (and {@code reply.stopped} is written): an {@code abortOn}
	 * event does. A lapsed or superseded attempt does not (another attempt owns the reply), nor a clear
	 * (the reply is gone with the session's log).
	 */
	private static boolean stopsTheReply(ConsumerContext context, A2Exception reason) {
		if (reason.code() != ErrorCode.ABORTED) {
			return false;
		}
		// the trigger is still readable: a clear would have hidden it with the rest of the log
		return eventAt(context, context.event().index()) != null;
	}

	/** Two counts of tokens added up; a count one of them lacks is the other's. */
	private static @Nullable TokenUsage plus(@Nullable TokenUsage sum, @Nullable TokenUsage usage) {
		if (sum == null || usage == null) {
			return (sum != null) ? sum : usage;
		}
		return new TokenUsage(plus(sum.promptTokens(), usage.promptTokens()),
				plus(sum.completionTokens(), usage.completionTokens()), plus(sum.totalTokens(), usage.totalTokens()));
	}

	private static @Nullable Integer plus(@Nullable Integer sum, @Nullable Integer count) {
		return (sum == null || count == null) ? ((sum != null) ? sum : count) : Integer.valueOf(sum + count);
	}

	/** What one model call streamed. */
	private static final class Step {

		ReplyOutcome.Ending ending = ReplyOutcome.Ending.COMPLETED;

		final StringBuilder textBuilder = new StringBuilder();

		String text = "";

		@Nullable String finishReason;

		@Nullable TokenUsage usage;

		@Nullable String error;

		final List<AssistantMessage.ToolCall> toolCalls = new ArrayList<>();

	}

	/**
	 * Subscribes to the model's stream and writes it, coalesced, until it ends, fails or the run is
	 * aborted. The stream's items are handed to the run's thread through a queue; an abort wakes the
	 * thread and disposes of the subscription (the provider's stream is cancelled) on another thread.
	 */
	private Step streamStep(ConsumerContext context, Flux<ChatResponse> responses, ReplyWriter writer) {
		Step step = new Step();
		if (context.signal().isAborted()) {
			// stopped before the model was asked: it is never called
			step.ending = ReplyOutcome.Ending.STOPPED;
			return step;
		}
		Map<String, AssistantMessage.ToolCall> toolCalls = new LinkedHashMap<>();
		LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
		Disposable subscription = responses.subscribe(queue::add, queue::add, () -> queue.add(END));
		context.signal().onAbort(() -> {
			queue.add(ABORT);
			cancel(subscription);
		});
		long flushInterval = this.settings.flushInterval().toNanos();
		long flushAt = 0;
		boolean first = true;
		try {
			// chunks the model sent before an abort wait in the queue ahead of it: none is written after it
			while (!context.signal().isAborted()) {
				// the shown activity is written again while the model thinks or streams, so it outlasts the presence TTL
				writer.renewActivity();
				long flushWait = writer.hasPending() ? Math.max(0, flushAt - System.nanoTime()) : -1;
				long renewalWait = writer.untilActivityRenewal();
				long wait = (flushWait < 0 || (renewalWait >= 0 && renewalWait < flushWait)) ? renewalWait : flushWait;
				Object item = next(context, queue, wait);
				if (item == null) {
					if (writer.hasPending() && System.nanoTime() - flushAt >= 0) {
						writer.flush();
					}
				}
				else if (item instanceof ChatResponse response) {
					String text = read(response, step, toolCalls);
					if (!text.isEmpty()) {
						boolean wasEmpty = !writer.hasPending();
						writer.add(text);
						step.textBuilder.append(text);
						if (first) {
							// the first chunk goes out at once: the reader sees the model has begun
							first = false;
							writer.flush();
							writer.activity("streaming");
						}
						else if (writer.pendingChunks() >= this.settings.flushTokens()) {
							writer.flush();
						}
						else if (wasEmpty) {
							flushAt = System.nanoTime() + flushInterval;
						}
					}
				}
				else if (item instanceof Throwable failure) {
					step.ending = ReplyOutcome.Ending.FAILED;
					step.error = describe(failure);
					break;
				}
				else if (item == END) {
					break;
				}
				else {
					step.ending = ReplyOutcome.Ending.STOPPED;
					break;
				}
			}
		}
		catch (RuntimeException ex) {
			if (!context.signal().isAborted()) {
				cancel(subscription);
				throw ex;
			}
			// an abort interrupted an append: what follows is the abort's
			step.ending = ReplyOutcome.Ending.STOPPED;
		}
		if (context.signal().isAborted()) {
			step.ending = ReplyOutcome.Ending.STOPPED;
			cancel(subscription);
			// the abort interrupted this thread; what is written next must not fail on it
			Thread.interrupted();
		}
		step.text = step.textBuilder.toString();
		step.toolCalls.addAll(toolCalls.values());
		return step;
	}

	/**
	 * What {@code reply.failed} says of a failed stream: the failure without a future's wrapper
	 * (a {@link CompletionException}'s message is its cause's class name and message again), and
	 * its causes: OpenAI's client fails a stream that outlasted its timeout with "Stream failed",
	 * and only its cause says "timeout".
	 */
	static String describe(Throwable failure) {
		Throwable shown = failure;
		while ((shown instanceof CompletionException || shown instanceof ExecutionException) && shown.getCause() != null) {
			shown = shown.getCause();
		}
		StringBuilder text = new StringBuilder(named(shown));
		String separator = " (";
		int causes = 0;
		for (Throwable cause = shown.getCause(); cause != null && cause != shown && causes < 3; cause = cause.getCause()) {
			text.append(separator).append(named(cause));
			separator = "; ";
			causes++;
		}
		return (causes > 0) ? text.append(')').toString() : text.toString();
	}

	private static String named(Throwable failure) {
		String name = failure.getClass().getSimpleName();
		return (failure.getMessage() != null) ? name + ": " + failure.getMessage() : name;
	}

	/**
	 * Cancels the model's stream without waiting for it. A provider's cancel can block until its
	 * stream's reader lets go: OpenAI's client closes its response only once the read in progress
	 * returns, which is when the next chunk comes or its timeout (60 s) passes when the model
	 * thinks. An abort runs in the thread that appended the Stop (its HTTP push) or heard it (the
	 * heartbeat that renews every claim of the instance), and the reply's end is written by the
	 * run's thread: neither may wait for the provider.
	 */
	private static void cancel(Disposable subscription) {
		if (!subscription.isDisposed()) {
			Schedulers.boundedElastic().schedule(subscription::dispose);
		}
	}

	/**
	 * The next item of the stream: waits for one when {@code waitNanos} is negative (nothing to flush
	 * or renew), else answers {@code null} when {@code waitNanos} passed first (0: a flush or renewal is due).
	 */
	private static @Nullable Object next(ConsumerContext context, LinkedBlockingQueue<Object> queue, long waitNanos) {
		try {
			if (waitNanos < 0) {
				return queue.take();
			}
			return (waitNanos == 0) ? queue.poll() : queue.poll(waitNanos, TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			if (context.signal().isAborted()) {
				return ABORT;
			}
			Thread.currentThread().interrupt();
			throw new IllegalStateException("the reply's run was interrupted", ex);
		}
	}

	private static @Nullable String storable(@Nullable String text) {
		return (text != null) ? StorableText.replacingUnstorable(text) : null;
	}

	private static String read(ChatResponse response, Step step, Map<String, AssistantMessage.ToolCall> toolCalls) {
		StringBuilder text = new StringBuilder();
		for (Generation generation : response.getResults()) {
			AssistantMessage output = generation.getOutput();
			if (output.getText() != null) {
				text.append(output.getText());
			}
			for (AssistantMessage.ToolCall call : output.getToolCalls()) {
				// stored as run and as sent back: a glitch in the model's arguments fails no reply
				toolCalls.put(call.id(), new AssistantMessage.ToolCall(storable(call.id()), call.type(), storable(call.name()),
						storable(call.arguments())));
			}
			String finishReason = generation.getMetadata().getFinishReason();
			if (finishReason != null && !finishReason.isEmpty()) {
				step.finishReason = finishReason;
			}
		}
		Usage usage = response.getMetadata().getUsage();
		if (usage != null && (usage.getTotalTokens() != null && usage.getTotalTokens() > 0)) {
			step.usage = new TokenUsage(usage.getPromptTokens(), usage.getCompletionTokens(), usage.getTotalTokens());
		}
		return text.toString();
	}

}
