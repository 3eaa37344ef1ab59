package dev.a2.sample;

import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.ai.AiEvents;
import dev.a2.ai.AiEvents.ToolApprovalRequested;
import dev.a2.ai.AiEvents.ToolResult;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.sample.TourContract.StopRequested;
import dev.a2.testkit.A2Test;
import dev.a2.testkit.A2TestKit;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pizza tool waits for a person's approval. An approval pushed twice (two devices, a double
 * click) orders one pizza: the assistant handles approvals one at a time, so the second finds the
 * call answered. A Stop while it waits ends the reply, and orders nothing.
 */
@A2Test(consumers = "assistant", properties = "sample.assistant.token-delay=0ms")
class AssistantApprovalTests {

	@Autowired
	private A2TestKit kit;

	@Test
	void anApprovalPushedTwiceOrdersOnePizza() {
		Session room = this.kit.session("chat", "pizza-room");
		room.append(NewEvent.of("message.sent", new MessageSent("@assistant order a pizza", "ann", "ann")));
		this.kit.drain();
		String callId = ofType(room, AiEvents.TOOL_APPROVAL_REQUESTED).get(0).payload(ToolApprovalRequested.class).callId();

		// the first approval's run freezes before its code: the second must wait for it, not order meanwhile
		this.kit.consumer("assistant").stallNext();
		room.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved(callId)));
		room.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved(callId)));
		this.kit.drain();
		assertThat(ofType(room, AiEvents.TOOL_RESULT)).as("pizzas ordered while the first approval's run is frozen").isEmpty();

		this.kit.releaseStalled();
		this.kit.drain();

		assertThat(ofType(room, AiEvents.TOOL_RESULT)).extracting((event) -> event.payload(ToolResult.class).result())
			.singleElement()
			.asString()
			.startsWith("Pizza order #");
		assertThat(ofType(room, AiEvents.REPLY_COMPLETED)).hasSize(1);
	}

	@Test
	void aStopWhileThePizzaWaitsForApprovalEndsTheReplyAndALaterApprovalOrdersNothing() {
		Session room = this.kit.session("chat", "stopped-pizza");
		room.append(NewEvent.of("message.sent", new MessageSent("@assistant order a pizza", "ann", "ann")));
		this.kit.drain();
		String callId = ofType(room, AiEvents.TOOL_APPROVAL_REQUESTED).get(0).payload(ToolApprovalRequested.class).callId();

		room.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		this.kit.drain();
		assertThat(ofType(room, AiEvents.REPLY_STOPPED)).hasSize(1);

		// the page of another device still showed the prompt: its approval finds the call answered
		room.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved(callId)));
		this.kit.drain();
		assertThat(ofType(room, AiEvents.TOOL_RESULT)).extracting((event) -> event.payload(ToolResult.class))
			.singleElement()
			.satisfies((result) -> {
				assertThat(result.rejected()).isTrue();
				assertThat(result.result()).doesNotStartWith("Pizza order #");
			});
		assertThat(ofType(room, AiEvents.REPLY_COMPLETED)).isEmpty();

		// and the room goes on: the next question is answered with a prompt the model accepts
		room.append(NewEvent.of("message.sent", new MessageSent("@assistant hello again", "ann", "ann")));
		this.kit.drain();
		assertThat(ofType(room, AiEvents.REPLY_COMPLETED)).hasSize(1);
		assertThat(this.kit).isQuiet().hasNoDeadLetters();
	}

	@Test
	void twoPizzasAskedForTogetherWaitForApprovalOneAfterTheOther() {
		Session room = this.kit.session("chat", "two-pizzas-approved");
		room.append(NewEvent.of("message.sent", new MessageSent("@assistant order two pizzas", "ann", "ann")));
		this.kit.drain();
		for (int i = 0; i < 2; i++) {
			String callId = ofType(room, AiEvents.TOOL_APPROVAL_REQUESTED).get(i).payload(ToolApprovalRequested.class).callId();
			room.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved(callId)));
			this.kit.drain();
		}

		assertThat(ofType(room, AiEvents.TOOL_APPROVAL_REQUESTED)).hasSize(2);
		assertThat(ofType(room, AiEvents.TOOL_RESULT)).extracting((event) -> event.payload(ToolResult.class).result())
			.allSatisfy((result) -> assertThat(result).startsWith("Pizza order #"))
			.hasSize(2);
		assertThat(ofType(room, AiEvents.REPLY_COMPLETED)).hasSize(1);
	}

	/**
	 * Asked for two pizzas, the model asks for the tool again once the first is ordered: the reply waits
	 * a second time, in the run of the first approval, which the assistant's abortOn spares (an approval
	 * names no thread). A Stop of another thread leaves it; a Stop of its thread ends it, and the second
	 * pizza's approval pushed later orders nothing. The Stop once left it waiting.
	 */
	@Test
	void aStopWhileTheSecondOfTwoPizzasWaitsForApprovalEndsTheReplyAndALaterApprovalOrdersNothing() {
		Session room = this.kit.session("chat", "two-pizzas");
		room.append(NewEvent.of("message.sent", new MessageSent("@assistant order two pizzas", "ann", "ann")));
		this.kit.drain();
		String first = ofType(room, AiEvents.TOOL_APPROVAL_REQUESTED).get(0).payload(ToolApprovalRequested.class).callId();
		long approval = room.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved(first))).get(0).index();
		this.kit.drain();
		assertThat(ofType(room, AiEvents.TOOL_APPROVAL_REQUESTED)).as("the second pizza waits for approval").hasSize(2);
		String second = ofType(room, AiEvents.TOOL_APPROVAL_REQUESTED).get(1).payload(ToolApprovalRequested.class).callId();

		room.append(NewEvent.of("stop.requested", new StopRequested("bob")));
		this.kit.drain();
		assertThat(ofType(room, AiEvents.REPLY_STOPPED)).as("stopped by a Stop of another thread").isEmpty();

		room.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		this.kit.drain();
		assertThat(ofType(room, AiEvents.REPLY_STOPPED)).singleElement()
			.satisfies((event) -> assertThat(event.payload(AiEvents.ReplyStopped.class).replyTo()).isEqualTo(approval));

		room.append(NewEvent.of(AiEvents.TOOL_APPROVED, new AiEvents.ToolApproved(second)));
		this.kit.drain();
		assertThat(ofType(room, AiEvents.TOOL_RESULT)).extracting((event) -> event.payload(ToolResult.class))
			.satisfiesExactly((result) -> assertThat(result.result()).startsWith("Pizza order #"), (result) -> {
				assertThat(result.callId()).isEqualTo(second);
				assertThat(result.rejected()).isTrue();
			});
		assertThat(ofType(room, AiEvents.REPLY_COMPLETED)).isEmpty();
		assertThat(this.kit).isQuiet().hasNoDeadLetters();
	}

	private static java.util.List<Event> ofType(Session room, String type) {
		return room.history(0, 1000).events().stream().filter((event) -> event.type().equals(type)).toList();
	}

}
