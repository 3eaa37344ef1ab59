package dev.a2.ai;

import java.time.Duration;
import java.util.List;

import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiEvents.ReplyFailed;
import dev.a2.ai.AiEvents.ReplyStopped;
import dev.a2.ai.AiEvents.TokenUsage;
import dev.a2.ai.AiEvents.ToolApprovalRequested;
import dev.a2.ai.AiTestSupport.MessageSent;
import dev.a2.ai.AiTestSupport.StopRequested;
import dev.a2.ai.ScriptedModel.Script;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

import static dev.a2.ai.AiTestSupport.ofType;
import static dev.a2.ai.AiTestSupport.types;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a product bills from: every run's model calls that reported their tokens are on its end, whether
 * it completed, waits for approval, was stopped or failed. Such runs once recorded no usage at all.
 * The scripted model reports 7 prompt tokens a call and a token a word, in its last chunk.
 */
class ReplyUsageIntegrationTests {

	private final AiTestSupport support = new AiTestSupport("usage");

	@AfterEach
	void close() {
		this.support.close();
	}

	/** As docs/ai-replies.md wires it: one run at a time per session, aborted (and run) by a Stop. */
	private static Consumer assistant(ScriptedModel model) {
		return AiTestSupport.stoppable(Assistant.builder(model)
			.tools(tool("lookup"), tool("refund"))
			.approvalRequired("refund")
			.build());
	}

	/**
	 * A run that ends asking for two approvals bills its two model calls once: on its first request. The
	 * Stop that ends the waiting reply calls no model and adds nothing.
	 */
	@Test
	void aRunThatEndsWaitingForApprovalCarriesItsUsageOnItsFirstRequest() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "lookup", "{}"),
				new Script(List.of(), Duration.ZERO, -1,
						List.of(new AssistantMessage.ToolCall("call-a", "function", "refund", "{\"order\":1}"),
								new AssistantMessage.ToolCall("call-b", "function", "refund", "{\"order\":2}")),
						null, null));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "usage-waiting");
		session.append(NewEvent.of("message.sent", new MessageSent("refund both")));
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED).size() == 2);

		assertThat(ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED))
			.extracting((event) -> event.payload(ToolApprovalRequested.class).usage())
			.containsExactly(new TokenUsage(14, 0, 14), null);

		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));
		assertThat(ofType(session, AiEvents.REPLY_STOPPED).get(0).payload(ReplyStopped.class).usage()).isNull();
		assertThat(model.calls()).isEqualTo(2);
	}

	/**
	 * A run stopped while the model streams bills the calls that reported their tokens: the one that
	 * asked for a tool. The cancelled stream sent no usage (a provider sends it in its last chunk), and
	 * none is made up for it.
	 */
	@Test
	void aStoppedRunCarriesTheUsageOfItsModelCallsThatReportedIt() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "lookup", "{}"),
				Script.hanging(1, Duration.ZERO, "Let ", "me ", "see."));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "usage-stopped");
		session.append(NewEvent.of("message.sent", new MessageSent("look it up")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_DELTA));
		session.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_STOPPED));

		assertThat(ofType(session, AiEvents.REPLY_STOPPED).get(0).payload(ReplyStopped.class).usage())
			.isEqualTo(new TokenUsage(7, 0, 7));
	}

	/** A run whose model fails after a tool call bills that call. */
	@Test
	void aFailedRunCarriesTheUsageOfItsModelCallsThatReportedIt() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call-1", "lookup", "{}"),
				Script.failing(new IllegalStateException("the stream broke"), "Par"));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "usage-failed");
		session.append(NewEvent.of("message.sent", new MessageSent("look it up")));
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_FAILED));

		ReplyFailed failed = ofType(session, AiEvents.REPLY_FAILED).get(0).payload(ReplyFailed.class);
		assertThat(failed.error()).contains("the stream broke");
		assertThat(failed.usage()).isEqualTo(new TokenUsage(7, 0, 7));
	}

	private static ToolCallback tool(String name) {
		return new ToolCallback() {

			@Override
			public ToolDefinition getToolDefinition() {
				return ToolDefinition.builder().name(name).description(name).inputSchema("{\"type\":\"object\"}").build();
			}

			@Override
			public String call(String toolInput) {
				return name + " done";
			}

		};
	}

}
