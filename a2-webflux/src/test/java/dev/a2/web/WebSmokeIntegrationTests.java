package dev.a2.web;

import java.time.Duration;
import java.util.List;

import dev.a2.A2Observations;
import dev.a2.test.TestPostgres;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A push and a stream with state frames, as a new user tries them first, and both observed. */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
@Import(WebSmokeIntegrationTests.Observations.class)
class WebSmokeIntegrationTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("websmoke", registry::add);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Observations {

		@Bean
		TestObservationRegistry testObservationRegistry() {
			return TestObservationRegistry.create();
		}

	}

	@Autowired
	private WebTestClient http;

	@Autowired
	private TestObservationRegistry observations;

	@Test
	void aPushIsStreamedWithTheStateItLeadsToAndBothAreObserved() {
		this.http.post()
			.uri("/a2/chat/sessions/s1/events")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}]}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.events[0].index")
			.isEqualTo(1);
		List<ServerSentEvent<String>> first = this.http.get()
			.uri("/a2/chat/sessions/s1/stream?state=summary")
			.accept(MediaType.TEXT_EVENT_STREAM)
			.exchange()
			.expectStatus()
			.isOk()
			.returnResult(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			})
			.getResponseBody()
			.filter((event) -> event.event() != null)
			.take(4)
			.collectList()
			.block(Duration.ofSeconds(10));
		// The state where the stream starts (before any event), the history, the state after it; the
		// presence snapshot comes from its own feed and may arrive anywhere among them.
		assertThat(first).extracting(ServerSentEvent::event)
			.containsExactlyInAnyOrder("state", "events", "state", "presence");
		assertThat(first).filteredOn((event) -> !"presence".equals(event.event()))
			.extracting(ServerSentEvent::event)
			.containsExactly("state", "events", "state");
		assertThat(first).filteredOn((event) -> "state".equals(event.event()))
			.extracting(ServerSentEvent::data)
			.containsExactly("{\"index\":0,\"state\":{\"messages\":0,\"last\":\"\"}}",
					"{\"index\":1,\"state\":{\"messages\":1,\"last\":\"hi\"}}");

		// children of the request's observation, though they run on store threads: a tracer keeps them in
		// the request's trace (found by the observability trial)
		assertThat(this.observations).hasObservationWithNameEqualTo(A2Observations.PUSH)
			.that()
			.hasLowCardinalityKeyValue(A2Observations.CONTRACT, "chat")
			.hasHighCardinalityKeyValue(A2Observations.SESSION, "s1")
			.hasParentObservationContextMatching((parent) -> isRequest((Observation.ContextView) parent, "POST"));
		assertThat(this.observations).hasObservationWithNameEqualTo(A2Observations.APPEND)
			.that()
			.hasParentObservationContextMatching((parent) -> ((Observation.ContextView) parent).getName().equals(A2Observations.PUSH));
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(this.observations)
			.hasObservationWithNameEqualTo(A2Observations.STREAM)
			.that()
			.hasLowCardinalityKeyValue(A2Observations.TRANSPORT, "sse")
			.hasParentObservationContextMatching((parent) -> isRequest((Observation.ContextView) parent, "GET"))
			.hasBeenStopped());
	}

	private static boolean isRequest(Observation.ContextView observation, String method) {
		return observation.getName().equals("http.server.requests")
				&& method.equals(observation.getLowCardinalityKeyValue("method").getValue());
	}

}
