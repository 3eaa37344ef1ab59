package dev.a2.web;

import java.time.Duration;
import java.util.List;

import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class WebSmokeIntegrationTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.Server server = TestPostgres.server();
		registry.add("spring.datasource.url", () -> server.jdbcUrl(TestPostgres.newSchema("websmoke")));
		registry.add("spring.datasource.username", server::username);
		registry.add("spring.datasource.password", server::password);
	}

	@Autowired
	private WebTestClient http;

	@Test
	void pushThenStream() {
		this.http.post().uri("/a2/chat/sessions/s1/events").contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}]}")
			.exchange().expectStatus().isOk().expectBody().jsonPath("$.events[0].index").isEqualTo(1);
		Flux<ServerSentEvent<String>> stream = this.http.get().uri("/a2/chat/sessions/s1/stream?state=summary")
			.accept(MediaType.TEXT_EVENT_STREAM).exchange().expectStatus().isOk()
			.returnResult(new ParameterizedTypeReference<ServerSentEvent<String>>() { }).getResponseBody();
		List<ServerSentEvent<String>> first = stream.take(3).collectList().block(Duration.ofSeconds(10));
		first.forEach((e) -> System.out.println("SSE " + e.event() + " id=" + e.id() + " " + e.data()));
		assertThat(first).extracting(ServerSentEvent::event).contains("events");
	}

}
