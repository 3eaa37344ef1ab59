package dev.a2.sample;

import java.time.Duration;

import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.sample.TourContract.StopRequested;
import dev.a2.testkit.A2Test;
import dev.a2.testkit.A2TestKit;
import dev.a2.testkit.RunOutcome;
import dev.a2.testkit.RunRecord;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The assistant's stop, with the test kit: a token takes an hour, so the reply is surely running
 * when the stop arrives, and nothing but the stop can end it.
 */
@A2Test(consumers = "assistant", properties = "sample.assistant.token-delay=1h")
class AssistantStopTests {

	@Autowired
	private A2TestKit kit;

	@Test
	void aStopInTheThreadEndsTheReplyWhereItStands() {
		Session room = this.kit.session("chat", "stop-room");
		room.append(NewEvent.of("message.sent", new MessageSent("@assistant tell me a story", "ann", "ann")));
		this.kit.awaitRunning("assistant");

		room.append(NewEvent.of("stop.requested", new StopRequested("ann")));
		this.kit.drain();

		assertTheReplyAbortedAndTheStopsRunFoundNothingToEnd();
		assertThat(room).events().extracting("type").doesNotContain("reply.completed");
		assertThat(room.history(0, 100).events().stream().filter((e) -> e.type().equals("reply.delta")).count())
			.isLessThanOrEqualTo(1);
		// the stop ended the unit: nothing is retried, and the next message is answered
		assertThat(this.kit).isQuiet().hasNoDeadLetters();
	}

	@Test
	void aStopInAnotherThreadLeavesTheReplyRunning() {
		Session room = this.kit.session("chat", "two-threads");
		room.append(NewEvent.of("message.sent", new MessageSent("@assistant hello", "bob", "bob")));
		this.kit.awaitRunning("assistant");

		room.append(NewEvent.of("stop.requested", new StopRequested("someone-else")));

		// still running: the drainer cannot get idle while the reply waits for its next token
		assertThatThrownBy(() -> this.kit.drain(Duration.ofMillis(300))).isInstanceOf(AssertionError.class)
			.hasMessageContaining("assistant on chat/two-threads #1 (attempt 1)");
		room.append(NewEvent.of("stop.requested", new StopRequested("bob")));
		this.kit.drain();
		assertTheReplyAbortedAndTheStopsRunFoundNothingToEnd();
	}

	/** The reply's run was aborted; each Stop's own run (it ends a reply waiting for approval) found none. */
	private void assertTheReplyAbortedAndTheStopsRunFoundNothingToEnd() {
		assertThat(this.kit.journal().runs("assistant")).filteredOn((run) -> run.index() == 1)
			.extracting(RunRecord::outcome)
			.containsExactly(RunOutcome.ABORTED);
		assertThat(this.kit.journal().runs("assistant")).filteredOn((run) -> run.index() > 1)
			.extracting(RunRecord::outcome)
			.containsOnly(RunOutcome.COMPLETED);
	}

}
