package dev.a2.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.a2.A2Server;
import dev.a2.NewEvent;
import dev.a2.Session;
import dev.a2.autoconfigure.OrdersApplication.OrderPlaced;
import dev.a2.autoconfigure.OrdersApplication.Poison;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The operator console and the endpoint parts it reads, over HTTP on a running application: the page
 * itself, a consumer's lag while a dead letter blocks its lane, and a session's events.
 */
@SpringBootTest(classes = OrdersApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "a2.drain.sweep-interval=100ms", "management.endpoints.web.exposure.include=a2",
				"a2.console.enabled=true" })
@AutoConfigureWebTestClient
class A2ConsoleIntegrationTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("console", registry::add);
	}

	@Autowired
	private A2Server a2;

	@Autowired
	private WebTestClient http;

	@Test
	void theConsoleIsAPageOfTheEndpoint() {
		String page = this.http.get()
			.uri("/actuator/a2/console")
			.accept(MediaType.TEXT_HTML)
			.exchange()
			.expectStatus().isOk()
			.expectHeader().contentTypeCompatibleWith(MediaType.TEXT_HTML)
			.expectBody(String.class)
			.returnResult()
			.getResponseBody();
		assertThat(page).contains("<title>A2 operator console</title>").contains("/dead-letters").contains("/redrive");
		// a browser asks for anything
		this.http.get().uri("/actuator/a2/console").header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
			.exchange().expectStatus().isOk().expectHeader().contentTypeCompatibleWith(MediaType.TEXT_HTML);
	}

	@Test
	void aDeadLetterShowsAsLagOfItsConsumer() {
		Session session = this.a2.session("orders", "console-poisoned");
		session.append(NewEvent.of("poison", new Poison("arsenic")), NewEvent.of("poison", new Poison("lead")));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> this.http.get().uri("/actuator/a2").exchange().expectStatus().isOk().expectBody()
				.jsonPath("$.consumers[?(@.name == 'fragile')].deadLetters").isEqualTo(2)
				.jsonPath("$.consumers[?(@.name == 'fragile')].lag").isEqualTo(2)
				.jsonPath("$.consumers[?(@.name == 'fragile')].pending").isEqualTo(0));
	}

	@Test
	void aSessionsEventsArePagedInOrder() {
		Session session = this.a2.session("orders", "console-events");
		// one append: the shipper answers each order with an event of its own, which must not come between them
		List<NewEvent> orders = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			orders.add(NewEvent.of("order.placed", new OrderPlaced("sku-" + i, i + 1)));
		}
		session.append(orders);
		this.http.get().uri("/actuator/a2/events?contract=orders&session=console-events&after=2&limit=2")
			.exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.events.length()").isEqualTo(2)
			.jsonPath("$.events[0].index").isEqualTo(3)
			.jsonPath("$.events[0].type").isEqualTo("order.placed")
			.jsonPath("$.events[0].payload.sku").isEqualTo("sku-2")
			.jsonPath("$.events[1].index").isEqualTo(4)
			.jsonPath("$.head").isNumber();
	}

	@Test
	void badReadsAreRefusedInA2sErrorShape() {
		this.http.get().uri("/actuator/a2/events?contract=orders").exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD");
		this.http.get().uri("/actuator/a2/events?contract=nope&session=s").exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("UNKNOWN_CONTRACT");
		// a misspelt contract is not "no dead letters"
		this.http.get().uri("/actuator/a2/dead-letters?contract=nope").exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("UNKNOWN_CONTRACT");
		// and a misspelt consumer is not either
		this.http.get().uri("/actuator/a2/dead-letters?contract=orders&consumer=nope").exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("NOT_FOUND")
			.jsonPath("$.error.message").value((String text) -> assertThat(text).contains("'nope'").contains("mailer").contains("shipper"));
		// where a consumer that is there has nothing dead, nothing is listed
		this.http.get().uri("/actuator/a2/dead-letters?contract=orders&consumer=mailer").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.length()").isEqualTo(0);
		this.http.get().uri("/actuator/a2/events?contract=orders&session=bad%20id").exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD");
		this.http.get().uri("/actuator/a2/everything").exchange().expectStatus().isBadRequest();
	}

}
