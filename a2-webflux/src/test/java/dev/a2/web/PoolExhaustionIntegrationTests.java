package dev.a2.web;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;


/**
 * When every pooled connection is taken (slow requests, a burst), a push answers 503
 * {@code STORE_UNAVAILABLE} once the pool's wait runs out, instead of hanging, and stores nothing;
 * once connections are back, the same push lands.
 */
@SpringBootTest(classes = ChatApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.datasource.hikari.maximum-pool-size=3", "spring.datasource.hikari.connection-timeout=500" })
@AutoConfigureWebTestClient(timeout = "30s")
class PoolExhaustionIntegrationTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("poolexhaustion", registry::add);
	}

	@Autowired
	private WebTestClient http;

	@Autowired
	private DataSource dataSource;

	@Test
	void aPushWithNoConnectionLeftAnswersStoreUnavailableAndStoresNothing() throws SQLException {
		List<Connection> taken = takeEveryConnection();
		try {
			// WebTestClient's response timeout is the guard against a hang
			push("m-1").expectStatus()
				.isEqualTo(503)
				.expectBody()
				.jsonPath("$.error.code")
				.isEqualTo("STORE_UNAVAILABLE");
		}
		finally {
			for (Connection connection : taken) {
				connection.close();
			}
		}
		push("m-1").expectStatus().isOk().expectBody().jsonPath("$.events[0].index").isEqualTo(1);
	}

	private WebTestClient.ResponseSpec push(String id) {
		return this.http.post()
			.uri("/a2/chat/sessions/exhausted/events")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"message.sent\",\"id\":\"" + id
					+ "\",\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}]}")
			.exchange();
	}

	/** Takes connections until the pool has none left (its wait runs out). */
	private List<Connection> takeEveryConnection() {
		List<Connection> taken = new ArrayList<>();
		while (true) {
			try {
				taken.add(this.dataSource.getConnection());
			}
			catch (SQLException ex) {
				return taken;
			}
		}
	}

}
