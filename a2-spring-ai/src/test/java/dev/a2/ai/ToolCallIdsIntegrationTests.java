package dev.a2.ai;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.a2.A2Server;
import dev.a2.Consumer;
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
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

import static dev.a2.ai.AiTestSupport.ofType;
import static dev.a2.ai.AiTestSupport.storedReply;
import static dev.a2.ai.AiTestSupport.types;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Tool calls across attempts and replies, where a model's call ids do not stay the same (a new
 * attempt's model gives the same call a new id) or do not differ (a model that numbers its calls
 * from the same id in every answer). Found by a trial of a support agent.
 */
class ToolCallIdsIntegrationTests {

	private final AiTestSupport support = new AiTestSupport("callids");

	/** Each run of a tool: its input and the effect key it was given. */
	private final List<String> runs = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() {
		this.support.close();
	}

	private Consumer assistant(ScriptedModel model) {
		ReplyStream replies = new ReplyStream(ReplySettings.DEFAULTS.withFlush(Duration.ofMillis(20), 64));
		Assistant assistant = Assistant.builder(model)
			.tools(tool("lookup"), tool("refund"))
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

	/**
	 * An instance crashes after a tool without approval ran and its result was stored; the new attempt's
	 * model makes the same call under another id. It ran the tool again, and an effect keyed by the call's
	 * id, as the page advised, was applied twice.
	 */
	@Test
	void aCallTheNewAttemptMakesAgainIsAnsweredWithTheStoredResultAndKeepsItsEffectKey() {
		ScriptedModel model = new ScriptedModel(
				Script.toolCall("call_a1", "lookup", "{\"order\":42}"),
				// attempt 1 hangs in its next step, after the tool's result was stored
				Script.hanging(1, Duration.ZERO, "Order ", "42 ", "is "),
				// attempt 2: the same call, another id
				Script.toolCall("call_b2", "lookup", "{\"order\":42}"),
				Script.answer(Duration.ZERO, "Order ", "42 ", "was ", "paid."));
		A2Server crashed = this.support.server(assistant(model));
		Session session = crashed.session("chat", "takeover");
		long replyTo = session.append(NewEvent.of("message.sent", new MessageSent("where is order 42?"))).get(0).index();
		await().atMost(Duration.ofSeconds(20)).until(() -> model.calls() == 2);
		assertThat(this.runs).hasSize(1);
		AiTestSupport.halt(crashed);

		A2Server survivor = this.support.server(assistant(model));
		this.support.leasesLapse();
		survivor.sweep();
		await().atMost(Duration.ofSeconds(20)).until(() -> types(session).contains(AiEvents.REPLY_COMPLETED));

		assertThat(this.runs).as("the tool ran once").hasSize(1);
		assertThat(storedReply(session, replyTo)).isEqualTo("Order 42 was paid.");
		List<ToolResult> results = ofType(session, AiEvents.TOOL_RESULT).stream().map((e) -> e.payload(ToolResult.class)).toList();
		assertThat(results).extracting(ToolResult::attempt, ToolResult::callId, ToolResult::result)
			.containsExactly(org.assertj.core.groups.Tuple.tuple(1, "call_a1", "lookup ran with {\"order\":42}"),
					org.assertj.core.groups.Tuple.tuple(2, "call_b2", "lookup ran with {\"order\":42}"));
		// what the model was answered in attempt 2: the stored result, under its call's new id
		assertThat(model.prompts.get(3).getInstructions().toString()).contains("call_b2").contains("lookup ran with");
	}

	/** The same effect key in every attempt, for a tool that ran but died before its result was stored. */
	@Test
	void aToolIsGivenAnEffectKeyThatIsTheSameInEveryAttemptAndDiffersByCall() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call_1", "lookup", "{\"order\":42}"),
				Script.answer(Duration.ZERO, "Paid."), Script.toolCall("call_2", "lookup", "{\"order\":43}"),
				Script.answer(Duration.ZERO, "Paid too."));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "keys");
		session.append(NewEvent.of("message.sent", new MessageSent("42?")));
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.REPLY_COMPLETED).size() == 1);
		session.append(NewEvent.of("message.sent", new MessageSent("43?")));
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.REPLY_COMPLETED).size() == 2);
		assertThat(this.runs).hasSize(2);
		String first = this.runs.get(0).substring(this.runs.get(0).indexOf(" key ") + 5);
		String second = this.runs.get(1).substring(this.runs.get(1).indexOf(" key ") + 5);
		assertThat(first).hasSize(36).isNotEqualTo(second);
	}

	/**
	 * A model that gives the same call id in two replies: the second approval ran nothing ("answered
	 * already") and its reply waited for ever. The second call is stored under an id of its own.
	 */
	@Test
	void aCallIdTheModelGivesAgainInALaterReplyIsMadeUniqueAndItsApprovalRuns() {
		ScriptedModel model = new ScriptedModel(Script.toolCall("call_1", "refund", "{\"order\":1}"),
				Script.answer(Duration.ZERO, "Refunded 1."), Script.toolCall("call_1", "refund", "{\"order\":2}"),
				Script.answer(Duration.ZERO, "Refunded 2."));
		A2Server server = this.support.server(assistant(model));
		Session session = server.session("chat", "repeated-ids");
		session.append(NewEvent.of("message.sent", new MessageSent("refund order 1")));
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED).size() == 1);
		session.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved("call_1")));
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.REPLY_COMPLETED).size() == 1);

		session.append(NewEvent.of("message.sent", new MessageSent("refund order 2")));
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED).size() == 2);
		ToolApprovalRequested second = ofType(session, AiEvents.TOOL_APPROVAL_REQUESTED).get(1).payload(ToolApprovalRequested.class);
		assertThat(second.callId()).isNotEqualTo("call_1").startsWith("call_1-");
		assertThat(ofType(session, AiEvents.TOOL_CALL).get(1).payload(ToolCall.class).callId()).isEqualTo(second.callId());
		session.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved(second.callId())));
		await().atMost(Duration.ofSeconds(20)).until(() -> ofType(session, AiEvents.REPLY_COMPLETED).size() == 2);

		assertThat(this.runs).extracting((run) -> run.substring(0, run.indexOf(" key ")))
			.containsExactly("refund {\"order\":1}", "refund {\"order\":2}");
		// the model was sent the second call and its answer under the id they are stored with
		assertThat(model.prompts.get(3).getInstructions().toString()).contains(second.callId());
	}

	@Test
	void anApprovalOrRejectionThatNamesNoCallIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new AiEvents.ToolApproved(" "))
			.withMessage("callId must name the tool call, as its tool.approval.requested does, was ' '");
		assertThatIllegalArgumentException().isThrownBy(() -> new AiEvents.ToolRejected(null, "no"))
			.withMessageEndingWith("was none");
	}

	private ToolCallback tool(String name) {
		return new ToolCallback() {

			@Override
			public ToolDefinition getToolDefinition() {
				return ToolDefinition.builder().name(name).description(name).inputSchema("{\"type\":\"object\"}").build();
			}

			@Override
			public String call(String toolInput) {
				throw new IllegalStateException("called without its context");
			}

			@Override
			public String call(String toolInput, ToolContext toolContext) {
				ToolCallIdsIntegrationTests.this.runs
					.add(name + " " + toolInput + " key " + toolContext.getContext().get(ReplyStream.TOOL_EFFECT_KEY));
				return name + " ran with " + toolInput;
			}

		};
	}

}
