package dev.a2.ai;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiTestSupport.MessageSent;
import dev.a2.ai.AiTestSupport.StopRequested;
import dev.a2.ai.ScriptedModel.Script;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

import static dev.a2.ai.AiTestSupport.storedReply;
import static dev.a2.ai.AiTestSupport.types;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A Stop at the edges of a reply: before the first token, while a tool runs, while a provider's model pauses. */
class ReplyStopIntegrationTests {

	private final AiTestSupport support = new AiTestSupport("stop");

	/** The assistant as docs/ai-replies.md wires it: one run at a time per session, aborted by a Stop. */
	private static Consumer stoppable(Assistant assistant) {
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS);
		return Consumer.builder("chat", "assistant")
			.types("message.sent")
			.lane(Lane.keyed((input) -> input.session()))
			.abortOn("stop.requested")
			.run((context) -> {
				replies.converse(context, assistant);
				return null;
			});
	}

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
		A2Server server = this.support.server(stoppable(Assistant.builder(model).tools(slow).build()));
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
		assertThat(model.calls()).isEqualTo(1);
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
			A2Server server = this.support.server(stoppable(Assistant.builder(openAi.model()).build()));
			Session session = server.session("chat", "stop-pausing");
			long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("think hard"))).get(0).index();
			// the first chunk is stored at once: the provider's client has read it and waits for the next
			await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_DELTA));
			CompletableFuture<?> stop = CompletableFuture
				.runAsync(() -> session.append(NewEvent.of("stop.requested", new StopRequested("ann"))));
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

}
