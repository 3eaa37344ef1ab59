package dev.a2.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The sample as the README runs it: on its embedded PostgreSQL, over real HTTP.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class SampleApplicationIntegrationTests {

	@Autowired
	private WebTestClient http;

	@Test
	void messagesAreStoredFoldedAndClearedOverHttp() {
		this.http.post().uri("/rooms/lobby/messages?id=m-1").bodyValue("{\"text\":\"hello\",\"author\":\"ann\"}")
			.header("Content-Type", "application/json")
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$[0].index").isEqualTo(1).jsonPath("$[0].payload.text").isEqualTo("hello");
		this.http.post().uri("/rooms/lobby/messages?id=m-1").bodyValue("{\"text\":\"hello\",\"author\":\"ann\"}")
			.header("Content-Type", "application/json")
			.exchange()
			.expectBody().jsonPath("$[0].index").isEqualTo(1);
		this.http.post().uri("/rooms/lobby/messages").bodyValue("{\"text\":\"again\",\"author\":\"bo\"}")
			.header("Content-Type", "application/json")
			.exchange()
			.expectBody().jsonPath("$[0].index").isEqualTo(2);

		this.http.get().uri("/rooms/lobby/summary").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.index").isEqualTo(2)
			.jsonPath("$.state.messages").isEqualTo(2)
			.jsonPath("$.state.lastMessage").isEqualTo("bo: again");

		this.http.delete().uri("/rooms/lobby?ifLastIndex=1").exchange()
			.expectStatus().isEqualTo(409)
			.expectBody().jsonPath("$.error.code").isEqualTo("CONFLICT");
		this.http.delete().uri("/rooms/lobby?ifLastIndex=2").exchange().expectStatus().isOk();
		this.http.get().uri("/rooms/lobby/messages").exchange()
			.expectBody().jsonPath("$.events.length()").isEqualTo(0).jsonPath("$.head").isEqualTo(3);
	}

	@Test
	void theBotAnswersAndTheProjectionIsReadAfterTheWrites() {
		this.http.post().uri("/rooms/help/messages").bodyValue("{\"text\":\"@bot hello there\",\"author\":\"ann\"}")
			.header("Content-Type", "application/json")
			.exchange()
			.expectStatus().isOk();
		this.http.post().uri("/rooms/quiet/messages").bodyValue("{\"text\":\"one two three\",\"author\":\"ann\"}")
			.header("Content-Type", "application/json")
			.exchange()
			.expectStatus().isOk();
		// no waiting: consume drives the projection through the message before answering
		this.http.get().uri("/rooms/quiet/words").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.words").isEqualTo(3).jsonPath("$.through").isEqualTo(1);
		org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).untilAsserted(() -> this.http.get()
			.uri("/rooms/help/messages")
			.exchange()
			.expectBody()
			.jsonPath("$.events[1].payload.author").isEqualTo("bot")
			.jsonPath("$.events[1].payload.text").isEqualTo("you said: hello there")
			.jsonPath("$.events[1].cause.consumer").isEqualTo("bot"));
		this.http.get().uri("/actuator/a2").exchange().expectStatus().isOk()
			.expectBody().jsonPath("$.consumers.length()").isEqualTo(2);
	}

	@Test
	void badInputGetsACleanErrorAndChangesNothing() {
		this.http.post().uri("/rooms/bad-input/messages").bodyValue("{\"text\":\" \",\"author\":\"ann\"}")
			.header("Content-Type", "application/json")
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((String message) -> org.assertj.core.api.Assertions.assertThat(message)
				.contains("events[0].payload.text"));
		this.http.get().uri("/rooms/bad-input/messages").exchange()
			.expectBody().jsonPath("$.head").isEqualTo(0);
	}

}
