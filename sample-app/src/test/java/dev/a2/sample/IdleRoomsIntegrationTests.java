package dev.a2.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The scheduled clear of idle rooms, with a short idle time (in its own application, so that it
 * clears no room of the other tests).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "a2.drain.sweep-interval=200ms", "sample.idle-room-clear=2s" })
@AutoConfigureWebTestClient
class IdleRoomsIntegrationTests {

	@Autowired
	private WebTestClient http;

	@Test
	void anIdleRoomIsClearedAndItsStateStartsOver() {
		this.http.post().uri("/a2/chat/sessions/idle/events")
			.bodyValue(Map.of("events", List.of(Map.of("type", "message.sent", "payload",
					Map.of("text", "anyone?", "author", "ann", "thread", "ann")))))
			.exchange()
			.expectStatus().isOk();
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> this.http.get()
			.uri("/a2/chat/sessions/idle/events")
			.exchange()
			.expectBody()
			.jsonPath("$.events.length()").isEqualTo(0)
			.jsonPath("$.head").value((Integer head) -> assertThat(head).isGreaterThan(1)));
		this.http.get().uri("/a2/chat/sessions/idle/state/summary").exchange()
			.expectBody().jsonPath("$.state.messages").isEqualTo(0);
	}

}
