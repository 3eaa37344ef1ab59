package com.example.shop;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's new application, run as the README says: its own {@code main}, the starter and
 * WebFlux, a PostgreSQL named by {@code spring.datasource.url} and nothing else. A placed order is
 * pushed over HTTP and the shipper's {@code order.shipped} appears once; a bad order is refused.
 */
class ShopApplicationIntegrationTests {

	@Test
	void aPlacedOrderIsShippedOnceAndABadOneIsRefused() throws Exception {
		try (EmbeddedPostgres postgres = EmbeddedPostgres.builder().start();
				ConfigurableApplicationContext shop = SpringApplication.run(ShopApplication.class,
						// not the sample's application.properties, which share this classpath
						"--spring.config.name=shop", "--server.port=0",
						"--spring.datasource.url=" + postgres.getJdbcUrl("postgres", "postgres"),
						"--spring.datasource.username=postgres")) {
			WebClient orders = WebClient.create("http://localhost:"
					+ shop.getEnvironment().getProperty("local.server.port") + "/a2/orders/sessions/order-1");

			String placed = post(orders, "{\"events\":[{\"type\":\"order.placed\",\"payload\":{\"sku\":\"book-1\",\"quantity\":2}}]}");
			assertThat(placed).startsWith("200 ").contains("\"index\":1");

			await().atMost(Duration.ofSeconds(30))
				.until(() -> types(orders).contains("order.shipped"));
			String history = history(orders);
			assertThat(JsonPath.<List<String>>read(history, "$.events[*].type")).containsExactly("order.placed",
					"order.shipped");
			assertThat(JsonPath.<String>read(history, "$.events[1].payload.sku")).isEqualTo("book-1");
			assertThat(JsonPath.<String>read(history, "$.events[1].cause.consumer")).isEqualTo("shipper");
			// the shipper's lane is independent: its cause has no lane (web.md, PROTOCOL.md §2)
			assertThat(JsonPath.<Map<String, Object>>read(history, "$.events[1].cause")).containsOnlyKeys("consumer", "index",
					"attempt")
				.containsEntry("index", 1);

			String refused = post(orders, "{\"events\":[{\"type\":\"order.placed\",\"payload\":{\"sku\":\"\",\"quantity\":0}}]}");
			assertThat(refused).startsWith("400 ")
				.contains("\"code\":\"INVALID_PAYLOAD\"")
				.contains("events[0].payload.");
			assertThat(JsonPath.<List<String>>read(history(orders), "$.events[*].type")).hasSize(2);
		}
	}

	private static String post(WebClient orders, String body) {
		return orders.post()
			.uri("/events")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchangeToMono((response) -> response.bodyToMono(String.class)
				.map((answer) -> response.statusCode().value() + " " + answer))
			.block(Duration.ofSeconds(20));
	}

	private static String history(WebClient orders) {
		return orders.get().uri("/events?after=0").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(20));
	}

	private static List<String> types(WebClient orders) {
		return JsonPath.read(history(orders), "$.events[*].type");
	}

}
