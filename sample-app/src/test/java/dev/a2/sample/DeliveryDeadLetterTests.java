package dev.a2.sample;

import java.time.Duration;

import dev.a2.NewEvent;
import dev.a2.RedriveAction;
import dev.a2.Session;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.testkit.A2Test;
import dev.a2.testkit.A2TestKit;
import dev.a2.testkit.RunOutcome;
import dev.a2.testkit.RunRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The delivery's dead letter and its redrive, with the test kit: a refused message is dead-lettered
 * at once, blocks the room's later deliveries, and an operator's retry or skip unblocks them.
 */
@A2Test(consumers = "delivery")
class DeliveryDeadLetterTests {

	@Autowired
	private A2TestKit kit;

	@Autowired
	private Delivery delivery;

	@AfterEach
	void refuseAsConfigured() {
		this.delivery.refuse("kaboom");
	}

	@Test
	void aMessageIsDeliveredAfterTwoFailures() {
		Session room = this.kit.session("chat", "room-1");
		this.kit.consumer("delivery").failNext(2);
		room.append(NewEvent.of("message.sent", new MessageSent("hi", "ann", "ann")));

		this.kit.advance(Duration.ofMinutes(1));

		assertThat(room).hasEventTypes("message.sent", "message.delivered");
		assertThat(this.kit.journal().backOffs("delivery")).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
	}

	@Test
	void aRefusedMessageIsDeadLetteredAtOnceAndARetryDeliversTheRoomInOrder() {
		Session room = this.kit.session("chat", "retry-room");
		room.append(NewEvent.of("message.sent", new MessageSent("kaboom!", "ann", "ann")));
		this.kit.drain();
		room.append(NewEvent.of("message.sent", new MessageSent("hello", "ann", "ann")));
		this.kit.drain();

		assertThat(this.kit).hasDeadLetter("delivery", "retry-room", 1).isQuiet();
		assertThat(room).hasEventTypes("message.sent", "message.sent");
		assertThat(this.kit.journal().runs("delivery")).extracting(RunRecord::outcome)
			.containsExactly(RunOutcome.DEAD_LETTERED);

		this.delivery.refuse("");
		assertThat(this.kit.server().redrive("chat", "retry-room", "delivery", 1, RedriveAction.RETRY)).isTrue();
		this.kit.drain();

		assertThat(room).hasEventTypes("message.sent", "message.sent", "message.delivered", "message.delivered")
			.hasNoDuplicateEffects();
		assertThat(room).events().filteredOn("type", "message.delivered").extracting("payload.index").containsExactly(1L, 2L);
		assertThat(this.kit).isQuiet().deadLetters().filteredOn("session", "retry-room").isEmpty();
	}

	@Test
	void aSkipLeavesTheRefusedMessageUndeliveredAndUnblocksTheRoom() {
		Session room = this.kit.session("chat", "skip-room");
		room.append(NewEvent.of("message.sent", new MessageSent("kaboom", "bob", "bob")),
				NewEvent.of("message.sent", new MessageSent("and this", "bob", "bob")));
		this.kit.drain();
		assertThat(this.kit).hasDeadLetter("delivery", "skip-room", 1);

		this.kit.server().redrive("chat", "skip-room", "delivery", 1, RedriveAction.SKIP);
		this.kit.drain();

		assertThat(room).hasEventTypes("message.sent", "message.sent", "message.delivered");
		assertThat(room).events().filteredOn("type", "message.delivered").extracting("payload.index").containsExactly(2L);
	}

}
