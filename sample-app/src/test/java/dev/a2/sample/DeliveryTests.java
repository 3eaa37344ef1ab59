package dev.a2.sample;

import java.time.Duration;

import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.sample.TourContract.MessageSent;
import dev.a2.testkit.A2Test;
import dev.a2.testkit.A2TestKit;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/** The tour's delivery consumer under the test kit: a message sent is delivered after two failed runs, with back-offs of 1 s and 2 s. */
@A2Test(consumers = "delivery")
class DeliveryTests {

	@Autowired
	A2TestKit kit;

	@Test
	void aMessageIsDeliveredAfterTwoFailures() {
		Session room = kit.session("chat", "room-1");
		kit.consumer("delivery").failNext(2);
		room.append(NewEvent.of("message.sent", new MessageSent("hi", "ann", "ann")));
		kit.advance(Duration.ofMinutes(1));
		assertThat(room).hasEventTypes("message.sent", "message.delivered");
		assertThat(kit.journal().backOffs("delivery")).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
	}

}
