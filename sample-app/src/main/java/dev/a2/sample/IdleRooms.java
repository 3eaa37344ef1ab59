package dev.a2.sample;

import java.time.Duration;
import java.util.List;

import dev.a2.ConsumerContext;
import dev.a2.spring.A2Consumer;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Clears a room nobody wrote to for a while. It reads every event of every room as a batch
 * projection (a fixed lane; a method taking a list gets up to a claim's worth of events at once) and
 * schedules a clear that happens only if the room's last index is then still the batch's last: any
 * later event makes that clear a no-op and schedules its own.
 */
@Component
class IdleRooms {

	private final Duration idle;

	IdleRooms(@Value("${sample.idle-room-clear:PT30M}") Duration idle) {
		this.idle = idle;
	}

	@A2Consumer(contract = "chat", name = "idle-rooms", lane = "idle-rooms")
	void watch(List<ConsumerContext> batch) {
		ConsumerContext last = batch.get(batch.size() - 1);
		last.session().scheduleClear("idle", this.idle, last.event().index());
	}

}
