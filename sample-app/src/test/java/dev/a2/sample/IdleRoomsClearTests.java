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

/**
 * The idle-room clear after 30 virtual minutes (the sample's setting), with the test kit: no real
 * minute passes, and the room is cleared at the minute, not before.
 */
@A2Test(consumers = "idle-rooms")
class IdleRoomsClearTests {

	@Autowired
	private A2TestKit kit;

	@Test
	void aRoomNobodyWroteToForThirtyMinutesIsCleared() {
		Session room = this.kit.session("chat", "quiet-room");
		room.append(NewEvent.of("message.sent", new MessageSent("anyone?", "ann", "ann")));
		this.kit.drain();

		this.kit.advance(Duration.ofMinutes(30).minusSeconds(1));
		assertThat(room).hasEventTypes("message.sent");

		this.kit.advance(Duration.ofSeconds(1));
		assertThat(room).hasEventTypes();
		assertThat(room.state("summary").state()).isEqualTo(new TourContract.Summary(0, 0, ""));
	}

	@Test
	void aLaterMessageKeepsTheRoomForAnotherThirtyMinutes() {
		Session room = this.kit.session("chat", "busy-room");
		room.append(NewEvent.of("message.sent", new MessageSent("first", "bob", "bob")));
		this.kit.advance(Duration.ofMinutes(20));
		room.append(NewEvent.of("message.sent", new MessageSent("second", "bob", "bob")));

		this.kit.advance(Duration.ofMinutes(10));
		assertThat(room).hasEventTypes("message.sent", "message.sent");

		this.kit.advance(Duration.ofMinutes(20));
		assertThat(room).hasEventTypes();
	}

}
