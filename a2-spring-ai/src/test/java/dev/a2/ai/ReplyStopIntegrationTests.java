package dev.a2.ai;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.LogCapture;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiEvents.ReplyStopped;
import dev.a2.ai.AiEvents.ToolResult;
import dev.a2.ai.AiTestSupport.MessageSent;
import dev.a2.ai.AiTestSupport.StopRequested;
import dev.a2.ai.ScriptedModel.Script;
import dev.a2.test.AtOnce;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

import static dev.a2.ai.AiTestSupport.ofType;
import static dev.a2.ai.AiTestSupport.storedReply;
import static dev.a2.ai.AiTestSupport.types;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * A Stop at the edges of a reply: before the first token, while a tool runs, while a provider's model
 * pauses, while a call waits for a person's approval, after the reply completed.
 */
class ReplyStopIntegrationTests {

	private final AiTestSupport support = new AiTestSupport("stop");

	/** Every input the refund tool ran with: its effect. */
	private final List<String> refunds = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() {
		this.support.close();
	}

	@Test
	void aStopWhileAToolRunsEndsTheReplyWithReplyStoppedAndIdle() {
		CountDownLatch toolStarted = new CountDownLatch(1);
		ToolCallback slow = new ToolCallback() {

			@Override
			public ToolDefinition getToolDefinition() {
				return ToolDefinition.builder().name("slow").description("slow").inputSchema("{\"type\":\"object\"}").build();
			}

			@Override
			public String call(String toolInput) {
				toolStarted.countDown();
				try {
					new CountDownLatch(1).await(30, TimeUnit.SECONDS);
					return "slow done";
				}
				catch (InterruptedException ex) {
					throw new IllegalStateException("interrupted", ex);
				}
			}

		};
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "slow", "{}"), Script.answer(Duration.ZERO, "never"));
		A2Server server = this.support.server(AiTestSupport.stoppable(Assistant.builder(model).tools(slow).build()));
		Session session = server.session("chat", "stop-tool");
		session.append(NewEvent.of("message.sent", new MessageSent("go")));
		await().atMost(Duration.ofSeconds(20)).until(() -> toolStarted.getCount() == 0);
		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));
		}
		catch (org.awaitility.core.ConditionTimeoutException ex) {
			// reported below with what the log and the work show
		}

		assertThat(types(session)).as("the reply ends with reply.stopped; pending work: " + server.pendingWork())
			.contains(AiEvents.REPLY_STOPPED);
		// the Stop's own run finds the reply stopped already, and asks the model nothing
		await().atMost(Duration.ofSeconds(20)).until(() -> server.pendingWork().isEmpty());
		assertThat(model.calls()).isEqualTo(1);
		assertThat(ofType(session, AiEvents.REPLY_STOPPED)).hasSize(1);
		assertThat(session.presence().participants().get("assistant").get(AiEvents.PRESENCE_FIELD).value()).isEqualTo("idle");
	}

	@Test
	void aStopBeforeTheFirstTokenEndsTheReplyWithReplyStoppedAndCancelsTheModel() throws Exception {
		ScriptedModel model = new ScriptedModel(Script.hanging(0, Duration.ZERO, "never"));
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		A2Server server = this.support.server(Consumer.builder("chat", "assistant")
			.types("message.sent")
			.abortOn("stop.requested")
			.run((context) -> {
				replies.stream(context, model.stream(new org.springframework.ai.chat.prompt.Prompt(ReplyStream.conversation(context))));
				return null;
			}));
		Session session = server.session("chat", "stop-early");
		session.append(NewEvent.of("message.sent", new MessageSent("go")));
		await().atMost(Duration.ofSeconds(20)).until(() -> model.calls() == 1);
		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		assertThat(model.cancelled.await(20, TimeUnit.SECONDS)).isTrue();
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
				session.presence().participants().get("assistant").get(AiEvents.PRESENCE_FIELD).value()).isEqualTo("idle"));
		assertThat(types(session)).containsExactly("message.sent", "stop.requested", AiEvents.REPLY_STOPPED);
	}

	@Test
	void aStopWhileAProvidersModelPausesIsStoredAndEndsTheReplyWithoutWaitingForTheProvider() throws Exception {
		// OpenAI's client closes a stream only once its read returns: when the next chunk comes, or its timeout (60 s) passes
		try (OpenAiStandIn openAi = OpenAiStandIn.pausing("Let me think")) {
			A2Server server = this.support.server(AiTestSupport.stoppable(Assistant.builder(openAi.model()).build()));
			Session session = server.session("chat", "stop-pausing");
			long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("think hard"))).get(0).index();
			// the first chunk is stored at once: the provider's client has read it and waits for the next
			await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_DELTA));
			CompletableFuture<?> stop = CompletableFuture
				.runAsync(() -> session.append(NewEvent.of("stop.requested", new StopRequested("ann"))), AtOnce.threads());
			try {
				await().atMost(Duration.ofSeconds(20)).until(() -> stop.isDone() && types(session).contains(AiEvents.REPLY_STOPPED));
			}
			catch (org.awaitility.core.ConditionTimeoutException ex) {
				// reported below
			}

			assertThat(stop).as("the Stop's append returned while the model still thinks").isDone();
			assertThat(types(session)).as("the reply ended while the model still thinks")
				.containsExactly("message.sent", AiEvents.REPLY_DELTA, "stop.requested", AiEvents.REPLY_STOPPED);
			assertThat(storedReply(session, replyTo)).isEqualTo("Let me think");
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
					session.presence().participants().get("assistant").get(AiEvents.PRESENCE_FIELD).value()).isEqualTo("idle"));
		}
	}

	/**
	 * A Stop pressed while the reply waits for a person's approval ends it: the waiting call is answered
	 * as stopped (the model must be sent an answer after every call), the reply ends {@code reply.stopped},
	 * an approval pushed later (a second device still showed the prompt) runs nothing, and the next
	 * message is sent to the model with the stopped call followed by its answer. It once left the reply
	 * waiting, and the later approval ran the tool.
	 */
	@Test
	void aStopWhileTheReplyWaitsForApprovalEndsItStoppedAndAnApprovalPushedLaterRunsNothing() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{\"order\":42}"),
				Script.answer(Duration.ZERO, "Hi."));
		A2Server server = this.support.server(AiTestSupport.stoppable(shop(model)));
		Session session = server.session("chat", "stop-waiting");
		long asked = session.append(NewEvent.of("message.sent", new MessageSent("refund order 42"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));

		assertThat(ofType(session, AiEvents.REPLY_STOPPED).get(0).payload(ReplyStopped.class).replyTo()).isEqualTo(asked);
		assertThat(ofType(session, AiEvents.TOOL_RESULT)).singleElement().satisfies((event) -> {
			ToolResult answer = event.payload(ToolResult.class);
			assertThat(answer.callId()).isEqualTo("call-1");
			assertThat(answer.rejected()).isTrue();
			assertThat(answer.result()).contains("stopped");
		});
		assertThat(turn(session, asked).end()).isEqualTo(AiEvents.REPLY_STOPPED);

		session.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-1")));
		await().atMost(Duration.ofSeconds(20)).until(() -> server.pendingWork().isEmpty());
		assertThat(this.refunds).isEmpty();
		assertThat(model.calls()).isEqualTo(1);

		session.append(NewEvent.of("message.sent", new MessageSent("never mind, say hi")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));
		assertThat(types(session)).containsExactly("message.sent", AiEvents.TOOL_CALL, AiEvents.TOOL_APPROVAL_REQUESTED,
				"stop.requested", AiEvents.TOOL_RESULT, AiEvents.REPLY_STOPPED, AiEvents.TOOL_APPROVED, "message.sent",
				AiEvents.REPLY_DELTA, AiEvents.REPLY_COMPLETED);
		String stoppedAnswer = ofType(session, AiEvents.TOOL_RESULT).get(0).payload(ToolResult.class).result();
		List<Message> sent = model.prompts.get(1).getInstructions();
		assertCallsAreFollowedByTheirAnswers(sent);
		assertThat(sent).extracting(ReplyStopIntegrationTests::describe)
			.containsExactly("system'You help with orders.'", "user'refund order 42'", "assistant[call-1]",
					"tool[call-1: " + stoppedAnswer + "]", "user'never mind, say hi'");
	}

	/**
	 * Of two calls of one answer that wait, one was approved and ran: a Stop then ends the reply, answering
	 * only the other, and the model is sent both answers with the next message.
	 */
	@Test
	void aStopAfterOneOfTwoWaitingCallsWasApprovedAnswersOnlyTheOther() {
		ScriptedModel model = new ScriptedModel(new Script(List.of(), Duration.ZERO, -1,
				List.of(new AssistantMessage.ToolCall("call-a", "function", "refund", "{\"order\":1}"),
						new AssistantMessage.ToolCall("call-b", "function", "refund", "{\"order\":2}")),
				null, null), Script.answer(Duration.ZERO, "Noted."));
		A2Server server = this.support.server(AiTestSupport.stoppable(shop(model)));
		Session session = server.session("chat", "stop-one-of-two");
		long asked = session.append(NewEvent.of("message.sent", new MessageSent("refund orders 1 and 2"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		session.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-a")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_RESULT) && server.pendingWork().isEmpty());
		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));

		assertThat(this.refunds).containsExactly("{\"order\":1}");
		assertThat(ofType(session, AiEvents.TOOL_RESULT)).extracting((event) -> event.payload(ToolResult.class))
			.extracting(ToolResult::callId, ToolResult::rejected)
			.containsExactly(tuple("call-a", false), tuple("call-b", true));
		assertThat(ofType(session, AiEvents.REPLY_STOPPED).get(0).payload(ReplyStopped.class).replyTo()).isEqualTo(asked);

		session.append(NewEvent.of("message.sent", new MessageSent("thanks")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));
		assertThat(model.calls()).isEqualTo(2);
		String stoppedAnswer = ofType(session, AiEvents.TOOL_RESULT).get(1).payload(ToolResult.class).result();
		assertThat(stoppedAnswer).contains("stopped");
		List<Message> sent = model.prompts.get(1).getInstructions();
		assertCallsAreFollowedByTheirAnswers(sent);
		assertThat(sent).extracting(ReplyStopIntegrationTests::describe)
			.containsExactly("system'You help with orders.'", "user'refund orders 1 and 2'", "assistant[call-a, call-b]",
					"tool[call-a: refunded]", "tool[call-b: " + stoppedAnswer + "]", "user'thanks'");
	}

	/**
	 * A Stop and an approval pushed together, in either order: the keyed lane runs them one at a time.
	 * The approval's run does not start when the Stop follows it in the log (the consumer's abortOn), and
	 * finds the call answered when the Stop came first: either way the tool never runs and the reply ends
	 * stopped.
	 */
	@Test
	void aStopAndAnApprovalPushedTogetherOnTheKeyedLaneEndTheReplyStoppedWithoutRunningTheTool() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{}"), Script.toolCall("call-2", "refund", "{}"));
		A2Server server = this.support.server(AiTestSupport.stoppable(shop(model)));
		Session approvalFirst = waitingForApproval(server, "approval-then-stop");
		approvalFirst.append(List.of(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-1")),
				NewEvent.of("stop.requested", new StopRequested("ann"))));
		Session stopFirst = waitingForApproval(server, "stop-then-approval");
		stopFirst.append(List.of(NewEvent.of("stop.requested", new StopRequested("ann")),
				NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-2"))));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(approvalFirst).contains(AiEvents.REPLY_STOPPED)
				&& types(stopFirst).contains(AiEvents.REPLY_STOPPED) && server.pendingWork().isEmpty());

		assertThat(this.refunds).isEmpty();
		assertThat(model.calls()).isEqualTo(2);
		for (Session session : List.of(approvalFirst, stopFirst)) {
			assertThat(ofType(session, AiEvents.TOOL_RESULT)).singleElement()
				.satisfies((event) -> assertThat(event.payload(ToolResult.class).rejected()).isTrue());
			assertThat(ofType(session, AiEvents.REPLY_STOPPED)).hasSize(1);
		}
	}

	/** A Stop pressed after the reply completed changes nothing, and asks the model nothing. */
	@Test
	void aStopAfterTheReplyCompletedChangesNothing() {
		ScriptedModel model = new ScriptedModel(Script.answer(Duration.ZERO, "Done."));
		A2Server server = this.support.server(AiTestSupport.stoppable(shop(model)));
		Session session = server.session("chat", "stop-after-completed");
		session.append(NewEvent.of("message.sent", new MessageSent("hi")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));
		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> server.pendingWork().isEmpty());

		assertThat(types(session)).containsExactly("message.sent", AiEvents.REPLY_DELTA, AiEvents.REPLY_COMPLETED, "stop.requested");
		assertThat(model.calls()).isEqualTo(1);
	}

	/**
	 * With an {@code abortOn} predicate that matches a Stop to its thread (the sample's: it spares the runs
	 * of approvals, which name no thread), a reply that waits a second time (the model asked for a tool
	 * again after the first approval, so the waiting run's trigger is the approval) is ended by a Stop of
	 * its thread and not by a Stop of another. It once stayed waiting: the page kept the prompt, and a later
	 * approval ran the tool.
	 */
	@Test
	void aStopOfItsThreadEndsAReplyThatWaitsASecondTimeAndAStopOfAnotherThreadDoesNot() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{\"order\":1}"),
				Script.toolCall("call-2", "refund", "{\"order\":2}"));
		A2Server server = this.support.server(threaded(shop(model), new CopyOnWriteArrayList<>()));
		Session session = server.session("chat", "stop-second-wait");
		session.append(NewEvent.of("message.sent", new MessageSent("ann: refund orders 1 and 2")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		long approval = session.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-1"))).get(0).index();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED).size() == 2 && server.pendingWork().isEmpty());
		assertThat(this.refunds).containsExactly("{\"order\":1}");

		session.append(NewEvent.of("stop.requested", new StopRequested("bob")));
		await().atMost(Duration.ofSeconds(20)).until(() -> server.pendingWork().isEmpty());
		assertThat(types(session)).as("a Stop of another thread ends nothing").doesNotContain(AiEvents.REPLY_STOPPED);

		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));
		assertThat(ofType(session, AiEvents.REPLY_STOPPED)).singleElement()
			.satisfies((event) -> assertThat(event.payload(ReplyStopped.class).replyTo()).isEqualTo(approval));
		assertThat(ofType(session, AiEvents.TOOL_RESULT)).extracting((event) -> event.payload(ToolResult.class))
			.extracting(ToolResult::callId, ToolResult::rejected)
			.containsExactly(tuple("call-1", false), tuple("call-2", true));
		assertThat(turn(session, approval).end()).isEqualTo(AiEvents.REPLY_STOPPED);

		// the page of another device still showed the prompt: its approval finds the call answered
		session.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call-2")));
		await().atMost(Duration.ofSeconds(20)).until(() -> server.pendingWork().isEmpty());
		assertThat(this.refunds).containsExactly("{\"order\":1}");
		assertThat(model.calls()).isEqualTo(2);
	}

	/**
	 * A Stop ends every reply of its thread that still waits, though a later reply of the thread
	 * completed (the page shows Stop while any of them waits): it once ended only the latest reply, and
	 * when that one had completed, nothing.
	 */
	@Test
	void aStopEndsEveryWaitingReplyOfItsThreadThoughALaterReplyCompleted() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{\"order\":1}"),
				Script.toolCall("call-2", "refund", "{\"order\":2}"), Script.answer(Duration.ZERO, "Hi."));
		A2Server server = this.support.server(threaded(shop(model), new CopyOnWriteArrayList<>()));
		Session session = server.session("chat", "stop-earlier-waiting");
		long first = session.append(NewEvent.of("message.sent", new MessageSent("ann: refund order 1"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED).size() == 1);
		long second = session.append(NewEvent.of("message.sent", new MessageSent("ann: refund order 2"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED).size() == 2);
		session.append(NewEvent.of("message.sent", new MessageSent("ann: hi")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED) && server.pendingWork().isEmpty());

		assertThat(ofType(session, AiEvents.REPLY_STOPPED)).extracting((event) -> event.payload(ReplyStopped.class).replyTo())
			.containsExactly(first, second);
		assertThat(ofType(session, AiEvents.TOOL_RESULT)).extracting((event) -> event.payload(ToolResult.class))
			.extracting(ToolResult::callId, ToolResult::rejected)
			.containsExactly(tuple("call-1", true), tuple("call-2", true));
		assertThat(this.refunds).isEmpty();
	}

	/**
	 * On a session with many finished replies, a Stop ends the reply that waits without reading any of
	 * the finished ones: it once read the trigger of every earlier reply until its {@code abortOn}
	 * predicate matched, so a Stop of a thread that had no reply for long read the whole session.
	 */
	@Test
	void aStopOnASessionWithManyFinishedRepliesEndsTheWaitingOneWithoutReadingTheFinishedOnes() {
		int finished = 80;
		List<Script> scripts = new ArrayList<>();
		scripts.add(Script.toolCall("call-1", "refund", "{\"order\":1}"));
		for (int i = 0; i < finished; i++) {
			scripts.add(Script.answer(Duration.ZERO, "ok"));
		}
		ScriptedModel model = new ScriptedModel(scripts.toArray(Script[]::new));
		List<Long> askedAbout = new CopyOnWriteArrayList<>();
		A2Server server = this.support.server(threaded(shop(model), askedAbout));
		Session session = server.session("chat", "stop-long-session");
		long asked = session.append(NewEvent.of("message.sent", new MessageSent("ann: refund order 1"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		List<NewEvent> messages = new ArrayList<>();
		for (int i = 0; i < finished; i++) {
			messages.add(NewEvent.of("message.sent", new MessageSent("bob: hello " + i)));
		}
		List<Long> bobs = session.append(messages).stream().map(Event::index).toList();
		await().atMost(Duration.ofSeconds(120)).until(() -> server.pendingWork().isEmpty());
		assertThat(ofType(session, AiEvents.REPLY_COMPLETED)).hasSize(finished);

		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));

		assertThat(ofType(session, AiEvents.REPLY_STOPPED)).singleElement()
			.satisfies((event) -> assertThat(event.payload(ReplyStopped.class).replyTo()).isEqualTo(asked));
		assertThat(askedAbout).as("the abortOn predicate was asked about finished replies").doesNotContainAnyElementsOf(bobs);
	}

	/**
	 * A consumer that aborts on a Stop it does not take leaves a waiting reply as it was: it is told so
	 * once, at WARN, when it first converses with an assistant that has approvals.
	 */
	@Test
	void aConsumerThatAbortsOnAStopItDoesNotTakeIsWarnedOnceThatAStopLeavesAWaitingReply() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "refund", "{}"), Script.answer(Duration.ZERO, "Hi."));
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		Assistant assistant = shop(model);
		try (LogCapture log = new LogCapture()) {
			A2Server server = this.support.server(Consumer.builder("chat", "forgetful")
				.types("message.sent", AiEvents.TOOL_APPROVED, AiEvents.TOOL_REJECTED)
				.lane(Lane.keyed((input) -> input.session()))
				.abortOn("stop.requested")
				.run((context) -> {
					replies.converse(context, assistant);
					return null;
				}));
			Session session = server.session("chat", "stop-not-taken");
			session.append(NewEvent.of("message.sent", new MessageSent("refund everything")));
			await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
			session.append(NewEvent.of("message.sent", new MessageSent("hi")));
			await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

			assertThat(log.lines("does not take")).singleElement()
				.asString()
				.contains("WARN", "'forgetful'", "[stop.requested]", "leaves the reply waiting");
		}
	}

	/**
	 * The assistant with an {@code abortOn} predicate as the sample's: a Stop by ann aborts only the
	 * replies to messages of her thread ("ann: …"), so it spares the runs of approvals. The trigger of
	 * every reply the predicate is asked about is added to {@code askedAbout}.
	 */
	private static Consumer threaded(Assistant assistant, List<Long> askedAbout) {
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		return Consumer.builder("chat", "assistant")
			.types("message.sent", AiEvents.TOOL_APPROVED, AiEvents.TOOL_REJECTED, "stop.requested")
			.lane(Lane.keyed((input) -> input.session()))
			.abortOn("stop.requested", (trigger, stop) -> {
				askedAbout.add(trigger.index());
				return trigger.payload() instanceof MessageSent message
						&& message.text().startsWith(stop.payload(StopRequested.class).by() + ": ");
			})
			.run((context) -> {
				replies.converse(context, assistant);
				return null;
			});
	}

	/** The model asks for a refund (its first script), which waits for a person. */
	private static Session waitingForApproval(A2Server server, String id) {
		Session session = server.session("chat", id);
		session.append(NewEvent.of("message.sent", new MessageSent("refund everything")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.TOOL_APPROVAL_REQUESTED));
		return session;
	}

	/** An assistant whose refund tool waits for a person's approval. */
	private Assistant shop(ScriptedModel model) {
		ToolCallback refund = new ToolCallback() {

			@Override
			public ToolDefinition getToolDefinition() {
				return ToolDefinition.builder().name("refund").description("refund").inputSchema("{\"type\":\"object\"}").build();
			}

			@Override
			public String call(String toolInput) {
				ReplyStopIntegrationTests.this.refunds.add(toolInput);
				return "refunded";
			}

		};
		return Assistant.builder(model).system("You help with orders.").tools(refund).approvalRequired("refund").build();
	}

	private static Conversation.Turn turn(Session session, long replyTo) {
		return ((Conversation) session.state(AiEvents.CONVERSATION).state()).reply(replyTo);
	}

	private static void assertCallsAreFollowedByTheirAnswers(List<Message> sent) {
		for (int i = 0; i < sent.size(); i++) {
			if (sent.get(i) instanceof AssistantMessage assistant && assistant.hasToolCalls()) {
				for (int c = 0; c < assistant.getToolCalls().size(); c++) {
					int at = i + 1 + c;
					assertThat(at).as("the answers follow the call; sent: " + sent.stream().map(ReplyStopIntegrationTests::describe).toList())
						.isLessThan(sent.size());
					assertThat(sent.get(at)).isInstanceOf(ToolResponseMessage.class);
				}
			}
		}
	}

	private static String describe(Message message) {
		if (message instanceof AssistantMessage assistant && assistant.hasToolCalls()) {
			return "assistant" + assistant.getToolCalls().stream().map(AssistantMessage.ToolCall::id).toList();
		}
		if (message instanceof ToolResponseMessage tool) {
			return "tool" + tool.getResponses().stream().map((response) -> response.id() + ": " + response.responseData()).toList();
		}
		return message.getMessageType().getValue() + "'" + message.getText() + "'";
	}

}
