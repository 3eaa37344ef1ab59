package dev.a2.ai;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiEvents.ToolApprovalRequested;
import dev.a2.ai.AiEvents.ToolCall;
import dev.a2.ai.AiEvents.ToolResult;
import dev.a2.ai.AiTestSupport.MessageSent;
import dev.a2.ai.ScriptedModel.Script;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.ai.tool.function.FunctionToolCallback;

import static dev.a2.ai.AiTestSupport.ofType;
import static dev.a2.ai.AiTestSupport.storedReply;
import static dev.a2.ai.AiTestSupport.types;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Tool calls, and a call that waits for a person, continued by whichever instance runs later. */
class ToolApprovalIntegrationTests {

	private final AiTestSupport support = new AiTestSupport("tools");

	/** Every input the refund tool ran with: its effect. */
	private final List<String> refunds = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() {
		this.support.close();
	}

	private Consumer assistant(ChatModel model) {
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		Assistant assistant = Assistant.builder(model)
			.system("You help with orders.")
			.tools(tool("lookup", (input) -> "order 42 was paid 30 EUR"), tool("refund", (input) -> {
				this.refunds.add(input);
				return "refunded";
			}))
			.approvalRequired("refund")
			.build();
		return Consumer.builder("chat", "assistant")
			.types("message.sent", AiEvents.TOOL_APPROVED, AiEvents.TOOL_REJECTED)
			.lane(Lane.keyed((input) -> input.session()))
			.run((context) -> {
				replies.converse(context, assistant);
				return null;
			});
	}

	@Test
	void anApprovalGrantedAfterTheApplicationRestartedContinuesTheConversationOnce() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "lookup", "{\"order\":42}"),
				Script.toolCall("call-2", "refund", "{\"order\":42}"), Script.answer(Duration.ZERO, "Your ", "refund ", "is ", "done."));
		A2Server before = this.support.server(assistant(model));
		Session session = before.session("chat", "refund");
		session.append(NewEvent.of("message.sent", new MessageSent("refund order 42")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		assertThat(types(session)).containsExactly("message.sent", AiEvents.TOOL_CALL, AiEvents.TOOL_RESULT, AiEvents.TOOL_CALL,
				AiEvents.TOOL_APPROVAL_REQUESTED);
		assertThat(ofType(session, AiEvents.TOOL_RESULT).get(0).payload(ToolResult.class).result()).isEqualTo("order 42 was paid 30 EUR");
		ToolApprovalRequested waiting = ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED).get(0).payload(ToolApprovalRequested.class);
		assertThat(waiting.callId()).isEqualTo("call-2");
		assertThat(this.refunds).isEmpty();
		before.close();

		A2Server after = this.support.server(assistant(model));
		Session later = after.session("chat", "refund");
		later.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-2")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(later).contains(AiEvents.REPLY_COMPLETED));
		// the same approval pushed twice (two devices) runs nothing more
		later.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-2")));
		await().atMost(Duration.ofSeconds(20)).until(() -> after.pendingWork().isEmpty());

		assertThat(this.refunds).containsExactly("{\"order\":42}");
		assertThat(model.calls()).isEqualTo(3);
		List<Message> continued = model.prompts.get(2).getInstructions();
		assertThat(continued.get(continued.size() - 1)).isInstanceOfSatisfying(ToolResponseMessage.class,
				(response) -> assertThat(response.getResponses().get(0).responseData()).isEqualTo("refunded"));
		assertThat(types(later)).endsWith(AiEvents.TOOL_APPROVED, AiEvents.TOOL_RESULT, AiEvents.REPLY_DELTA,
				AiEvents.REPLY_DELTA, AiEvents.REPLY_COMPLETED, AiEvents.TOOL_APPROVED);
		List<Message> memory = new SessionChatMemoryRepository(after, "chat").findByConversationId("refund");
		assertThat(memory).extracting((message) -> message.getMessageType().getValue())
			.containsExactly("user", "assistant", "tool", "assistant", "tool", "assistant");
		assertThat(memory.get(memory.size() - 1).getText()).isEqualTo("Your refund is done.");
	}

	/**
	 * A model that asks for an approval-gated tool with arguments that are no JSON object: a person was
	 * shown them to approve, and the approval ran nothing but "The tool failed: Conversion from JSON…"
	 * (found by a support-agent trial). The model is told at once, and no person is asked.
	 */
	@Test
	void aCallWhoseArgumentsAreNoJsonObjectIsAnsweredToTheModelWithoutAskingAPerson() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{\"order\": oops"),
				Script.answer(Duration.ZERO, "Which ", "order?"));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "malformed");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("refund it"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

		assertThat(types(session)).doesNotContain(AiEvents.TOOL_APPROVAL_REQUESTED);
		assertThat(ofType(session, AiEvents.TOOL_RESULT)).singleElement()
			.satisfies((event) -> assertThat(event.payload(ToolResult.class).result())
				.startsWith("The tool was not run and no person was asked: its arguments are not a JSON object ("));
		assertThat(this.refunds).isEmpty();
		assertThat(storedReply(session, replyTo)).isEqualTo("Which order?");
		assertThat(model.prompts.get(1).getInstructions().toString()).contains("not a JSON object");
	}

	@Test
	void aProvidersModelIsSentTheAssistantsToolsWithTheModelsOwnOptionsAndItsAnswerCompletes() throws Exception {
		// OpenAI's model reads only OpenAiChatOptions: other options fail every call before it is sent
		try (OpenAiStandIn openAi = new OpenAiStandIn("Hello", " there")) {
			A2Server server = this.support.server(assistant(openAi.model()));
			Session session = server.session("chat", "provider");
			long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("hi"))).get(0).index();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> types(session).contains(AiEvents.REPLY_COMPLETED) || types(session).contains(AiEvents.REPLY_FAILED));

			assertThat(ofType(session, AiEvents.REPLY_FAILED)).as("the reply did not fail").isEmpty();
			assertThat(storedReply(session, replyTo)).isEqualTo("Hello there");
			assertThat(openAi.requests).singleElement().satisfies((request) -> assertThat(request)
				.as("the model the model's options name, and the assistant's tools")
				.contains("\"model\":\"gpt-4o-mini\"", "\"name\":\"lookup\"", "\"name\":\"refund\""));
		}
	}

	@Test
	void aRejectedCallIsToldToTheModelAndNeverRuns() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{}"), Script.answer(Duration.ZERO, "Understood."));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "reject");
		session.append(NewEvent.of("message.sent", new MessageSent("refund everything")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		session.append(NewEvent.of(AiEvents.TOOL_REJECTED, new AiEvents.ToolRejected("call-1", "too much")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

		assertThat(this.refunds).isEmpty();
		ToolResult result = ofType(session, AiEvents.TOOL_RESULT).get(0).payload(ToolResult.class);
		assertThat(result.rejected()).isTrue();
		assertThat(result.result()).contains("too much");
		Event call = ofType(session, AiEvents.TOOL_CALL).get(0);
		assertThat(call.payload(ToolCall.class).name()).isEqualTo("refund");
	}

	@Test
	void aCallWaitingForApprovalIsNotSentToTheModelWithoutItsAnswer() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{}"), Script.answer(Duration.ZERO, "Meanwhile: hi."));
		A2Server server = this.support.server(assistant(model));
		Session session = talkWhileACallWaits(server, "meanwhile");

		// a provider refuses an assistant message whose tool calls have no answers
		assertThat(model.prompts.get(1).getInstructions()).noneSatisfy((message) -> assertThat(message)
			.isInstanceOfSatisfying(AssistantMessage.class,
					(assistant) -> assertThat(assistant.hasToolCalls()).isTrue()))
			.extracting(Message::getText)
			.contains("refund everything", "and say hi");
	}

	/**
	 * A tool with an effect keys it by the call's id, as a run taken over after a crash runs it again:
	 * the tool is handed the id (and the session's) in its {@code ToolContext}, whether it runs at once
	 * or after a person's approval. A Spring AI tool that declares a {@code ToolContext} was called
	 * without one, and could not learn the id.
	 */
	@Test
	void aToolIsToldItsCallIdAndSessionInItsToolContextWhenItRunsAtOnceAndAfterAnApproval() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "lookup", "{\"order\":\"o-1\"}"),
				Script.toolCall("call-2", "refund", "{\"order\":\"o-1\"}"), Script.answer(Duration.ZERO, "Refunded."));
		List<String> ran = new CopyOnWriteArrayList<>();
		BiFunction<Order, ToolContext, String> keyed = (order, toolContext) -> {
			Map<String, Object> given = (toolContext != null) ? toolContext.getContext() : Map.of();
			ran.add(order.order() + " " + given.get(ReplyStream.TOOL_CALL_ID) + " " + given.get(ReplyStream.TOOL_SESSION_ID));
			return "done";
		};
		Assistant shop = Assistant.builder(model)
			.tools(FunctionToolCallback.builder("lookup", keyed).inputType(Order.class).description("lookup").build(),
					FunctionToolCallback.builder("refund", keyed).inputType(Order.class).description("refund").build())
			.approvalRequired("refund")
			.build();
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		A2Server server = this.support.server(Consumer.builder("chat", "assistant")
			.types("message.sent", AiEvents.TOOL_APPROVED, AiEvents.TOOL_REJECTED)
			.lane(Lane.keyed((input) -> input.session()))
			.run((context) -> {
				replies.converse(context, shop);
				return null;
			}));
		Session session = server.session("chat", "keyed-tools");
		session.append(NewEvent.of("message.sent", new MessageSent("refund order o-1")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		session.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-2")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

		assertThat(ran).containsExactly("o-1 call-1 keyed-tools", "o-1 call-2 keyed-tools");
		assertThat(ofType(session, AiEvents.TOOL_RESULT)).extracting((event) -> event.payload(ToolResult.class).result())
			.containsExactly("\"done\"", "\"done\"");
	}

	/** The input of the tools of {@link #aToolIsToldItsCallIdAndSessionInItsToolContextWhenItRunsAtOnceAndAfterAnApproval}. */
	record Order(String order) {
	}

	@Test
	void textASessionCannotStoreInAToolsCallOrResultIsStoredRunAndSentWithTheReplacementCharacter() {
		// half an emoji in the model's arguments, and a NUL in the tool's result
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "read", "{\"file\":\"\uD83D\"}"),
				Script.answer(Duration.ZERO, "Read."));
		List<String> inputs = new CopyOnWriteArrayList<>();
		Assistant reader = Assistant.builder(model).tools(tool("read", (input) -> {
			inputs.add(input);
			return "bin\u0000ary";
		})).build();
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		A2Server server = this.support.server(Consumer.builder("chat", "assistant").types("message.sent").run((context) -> {
			replies.converse(context, reader);
			return null;
		}));
		Session session = server.session("chat", "binary");
		session.append(NewEvent.of("message.sent", new MessageSent("read the file")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

		assertThat(ofType(session, AiEvents.TOOL_CALL).get(0).payload(ToolCall.class).arguments()).isEqualTo("{\"file\":\"\uFFFD\"}");
		assertThat(inputs).containsExactly("{\"file\":\"\uFFFD\"}");
		assertThat(ofType(session, AiEvents.TOOL_RESULT).get(0).payload(ToolResult.class).result()).isEqualTo("bin\uFFFDary");
		List<Message> continued = model.prompts.get(1).getInstructions();
		assertThat(continued.get(continued.size() - 1)).isInstanceOfSatisfying(ToolResponseMessage.class,
				(response) -> assertThat(response.getResponses().get(0).responseData()).isEqualTo("bin\uFFFDary"));
		assertThat(model.calls()).isEqualTo(2);
	}

	/**
	 * A reply's usage counts every model call of its run: the call that asked for a tool was billed
	 * too (it once counted only the last call's tokens).
	 */
	@Test
	void aRepliesUsageCountsTheModelCallThatAskedForAToolToo() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "lookup", "{\"order\":42}"),
				Script.answer(Duration.ZERO, "Paid ", "30 ", "EUR."));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "usage");
		session.append(NewEvent.of("message.sent", new MessageSent("what did I pay?")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

		AiEvents.ReplyCompleted completed = ofType(session, AiEvents.REPLY_COMPLETED).get(0).payload(AiEvents.ReplyCompleted.class);
		// the scripted model counts 7 prompt tokens a call, and a token a word
		assertThat(completed.usage()).isEqualTo(new AiEvents.TokenUsage(14, 3, 17));
		assertThat(model.calls()).isEqualTo(2);
	}

	/**
	 * The user goes on talking while a call waits for approval. Once approved, the call's answer follows
	 * the assistant message that made the call, as providers (OpenAI, Anthropic) require, not the
	 * messages said meanwhile.
	 */
	@Test
	void anApprovedCallsAnswerIsSentRightAfterTheCallEvenWhenTheConversationWentOnMeanwhile() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{}"), Script.answer(Duration.ZERO, "Hi."),
				Script.answer(Duration.ZERO, "Refund done."));
		A2Server server = this.support.server(assistant(model));
		Session session = talkWhileACallWaits(server, "meanwhile-approved");
		session.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-1")));
		await().atMost(Duration.ofSeconds(20)).until(() -> model.calls() == 3 && server.pendingWork().isEmpty());

		List<Message> sent = model.prompts.get(2).getInstructions();
		assertCallsAreFollowedByTheirAnswers(sent);
	}

	/** An "approve all" button pushes both approvals of one model answer at once: the model is told both answers. */
	@Test
	void twoApprovalsPushedTogetherAreBothToldToTheModel() {
		ScriptedModel model = new ScriptedModel(new Script(List.of(), Duration.ZERO, -1,
				List.of(new AssistantMessage.ToolCall("call-a", "function", "refund", "{\"order\":1}"),
						new AssistantMessage.ToolCall("call-b", "function", "refund", "{\"order\":2}")),
				null, null), Script.answer(Duration.ZERO, "Both refunded."));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "approve-all");
		session.append(NewEvent.of("message.sent", new MessageSent("refund orders 1 and 2")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		session.append(List.of(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-a")),
				NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-b"))));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED)
				&& server.pendingWork().isEmpty());

		assertThat(this.refunds).containsExactlyInAnyOrder("{\"order\":1}", "{\"order\":2}");
		assertThat(model.calls()).isEqualTo(2);
		List<Message> sent = model.prompts.get(1).getInstructions();
		assertThat(sent.stream()
			.filter((message) -> message instanceof ToolResponseMessage)
			.flatMap((message) -> ((ToolResponseMessage) message).getResponses().stream())
			.map(ToolResponseMessage.ToolResponse::id)).as("the tool answers the model is sent: " + describe(sent))
			.containsExactlyInAnyOrder("call-a", "call-b");
		assertCallsAreFollowedByTheirAnswers(sent);
	}

	private static void assertCallsAreFollowedByTheirAnswers(List<Message> sent) {
		for (int i = 0; i < sent.size(); i++) {
			if (sent.get(i) instanceof AssistantMessage assistant && assistant.hasToolCalls()) {
				for (int c = 0; c < assistant.getToolCalls().size(); c++) {
					int at = i + 1 + c;
					assertThat(at).as("the answers follow the call; sent: " + describe(sent)).isLessThan(sent.size());
					assertThat(sent.get(at)).as("message %d of %s", at, describe(sent)).isInstanceOf(ToolResponseMessage.class);
				}
			}
		}
	}

	private static String describe(List<Message> messages) {
		return messages.stream().map((message) -> {
			if (message instanceof AssistantMessage assistant && assistant.hasToolCalls()) {
				return "assistant" + assistant.getToolCalls().stream().map(AssistantMessage.ToolCall::id).toList();
			}
			if (message instanceof ToolResponseMessage tool) {
				return "tool" + tool.getResponses().stream().map(ToolResponseMessage.ToolResponse::id).toList();
			}
			return message.getMessageType().getValue() + "'" + message.getText() + "'";
		}).toList().toString();
	}

	/** The model asks for a refund, which waits for a person, and answers "and say hi" meanwhile. */
	private static Session talkWhileACallWaits(A2Server server, String id) {
		Session session = server.session("chat", id);
		session.append(NewEvent.of("message.sent", new MessageSent("refund everything")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		session.append(NewEvent.of("message.sent", new MessageSent("and say hi")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));
		return session;
	}

	private static ToolCallback tool(String name, UnaryOperator<String> body) {
		return new ToolCallback() {

			@Override
			public ToolDefinition getToolDefinition() {
				return ToolDefinition.builder().name(name).description(name).inputSchema("{\"type\":\"object\"}").build();
			}

			@Override
			public String call(String toolInput) {
				return body.apply(toolInput);
			}

		};
	}

}
