package dev.a2.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import javax.sql.DataSource;

import dev.a2.A2Observations;
import dev.a2.A2Server;
import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.NonRetriableException;
import dev.a2.Session;
import dev.a2.autoconfigure.OrdersApplication.OrderConsumers;
import dev.a2.autoconfigure.OrdersApplication.OrderPlaced;
import dev.a2.autoconfigure.OrdersApplication.Poison;
import dev.a2.test.TestPostgres;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The starter in a running application on a real PostgreSQL: annotated consumers run, and the
 * actuator shows a dead letter and redrives it over HTTP.
 */
@SpringBootTest(classes = OrdersApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "a2.drain.sweep-interval=100ms", "management.endpoints.web.exposure.include=a2,health,loggers",
				"management.endpoint.health.show-details=always" })
@AutoConfigureWebTestClient
@Import(A2ApplicationIntegrationTests.Observations.class)
class A2ApplicationIntegrationTests {

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("application", registry::add);
	}

	@Autowired
	private A2Server a2;

	@Autowired
	private OrderConsumers consumers;

	@Autowired
	private WebTestClient http;

	@Autowired
	private DataSource dataSource;

	@Autowired
	private TestObservationRegistry observations;

	@BeforeEach
	void poisonIsFatalAgain() {
		this.consumers.healed.set(false);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Observations {

		@Bean
		TestObservationRegistry testObservationRegistry() {
			return TestObservationRegistry.create();
		}

	}

	@Test
	void annotatedConsumersOfEveryLaneKindRun() {
		Session session = this.a2.session("orders", "order-1");
		session.append(NewEvent.of("order.placed", new OrderPlaced("book", 1)),
				NewEvent.of("order.placed", Map.of("sku", "pen", "quantity", 2)));

		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			assertThat(this.consumers.mailed).containsExactlyInAnyOrder("book", "pen");
			assertThat(shipped(session)).containsExactlyInAnyOrder("book", "pen");
			assertThat(this.consumers.ledger).hasSize(4);
		});
		assertThat(this.consumers.ledger).isSorted();
		assertThat(session.history(0, 10).events().get(2).cause().consumer()).isEqualTo("shipper");
		// on the wire, a keyed consumer's cause names its lane, the key (web.md, PROTOCOL.md §2)
		this.http.get().uri("/a2/orders/sessions/order-1/events").exchange()
			.expectStatus().isOk()
			.expectBody()
			.jsonPath("$.events[?(@.type == 'order.shipped' && @.payload.sku == 'pen')].cause.lane").isEqualTo("pen")
			.jsonPath("$.events[?(@.type == 'order.shipped' && @.payload.sku == 'pen')].cause.consumer").isEqualTo("shipper");
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(this.observations)
			.hasAnObservation((observation) -> observation.hasNameEqualTo(A2Observations.EVENT)
				.hasLowCardinalityKeyValue(A2Observations.CONTRACT, "orders")
				.hasLowCardinalityKeyValue(A2Observations.CONSUMER, "shipper")
				.hasLowCardinalityKeyValue(A2Observations.EVENT_TYPE, "order.placed")
				.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "completed")
				.hasHighCardinalityKeyValue(A2Observations.SESSION, "order-1")
				.hasHighCardinalityKeyValueWithKey(A2Observations.EVENT_INDEX)
				.hasHighCardinalityKeyValueWithKey(A2Observations.ATTEMPT)
				.hasHighCardinalityKeyValueWithKey(A2Observations.AGE)));
		assertThat(this.observations).hasObservationWithNameEqualTo(A2Observations.APPEND)
			.that()
			.hasLowCardinalityKeyValue(A2Observations.CONTRACT, "orders");
		assertThat(this.observations).hasObservationWithNameEqualTo(A2Observations.CLAIM);
		assertThat(this.observations).hasObservationWithNameEqualTo(A2Observations.COMMIT);
	}

	@Test
	void theConsoleIsOffUnlessEnabled() {
		this.http.get().uri("/actuator/a2/console").exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.message").value((message) -> assertThat((String) message).contains("a2.console.enabled"));
	}

	@Test
	void theActuatorListsADeadLetterAndRedrivesIt() {
		Session session = this.a2.session("orders", "poisoned");
		session.append(NewEvent.of("poison", new Poison("arsenic")));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> this.http.get()
				.uri("/actuator/a2/dead-letters?contract=orders&session=poisoned")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$[0].consumer").isEqualTo("fragile")
				.jsonPath("$[0].index").isEqualTo(1)
				.jsonPath("$[0].lastError").isEqualTo("NonRetriableException: cannot digest arsenic"));

		this.http.get().uri("/actuator/a2").exchange().expectStatus().isOk().expectBody()
			.jsonPath("$.consumers[?(@.name == 'ledger')].lane").isEqualTo("fixed:ledger")
			.jsonPath("$.consumers[?(@.name == 'shipper')].lane").isEqualTo("keyed")
			.jsonPath("$.consumers[?(@.name == 'fragile')].deadLetters").isEqualTo(1);

		this.consumers.healed.set(true);
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "poisoned", "consumer", "fragile", "index", 1, "action", "retry"))
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.redriven").isEqualTo(true);
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(this.consumers.survived).containsExactly("arsenic"));
		assertThat(this.observations).hasObservationWithNameEqualTo(A2Observations.REDRIVE)
			.that()
			.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "retry");
		assertThat(this.observations).hasAnObservation((observation) -> observation.hasNameEqualTo(A2Observations.EVENT)
			.hasLowCardinalityKeyValue(A2Observations.CONSUMER, "fragile")
			.hasLowCardinalityKeyValue(A2Observations.OUTCOME, "dead_lettered"));
		this.http.get().uri("/actuator/a2/dead-letters?session=poisoned").exchange().expectBody().jsonPath("$.length()").isEqualTo(0);

		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "poisoned", "consumer", "fragile", "index", 1, "action", "later"))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message).contains("'later'"));
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "poisoned", "action", "retry"))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message).endsWith("it has no consumer, no index"));
		// redriven already: nothing to redrive, and the operator is told so
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "poisoned", "consumer", "fragile", "index", 1, "action", "retry"))
			.exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.message").value((message) -> assertThat((String) message).contains("no dead letter"));
	}

	/**
	 * operations.md: every operation answers its errors in A2's shape. A number that is not one (a
	 * typo in a script, a console's field) is a bad request like a missing field.
	 */
	@Test
	void aNumberThatIsNotOneIsRefusedInA2sShape() {
		this.http.get().uri("/actuator/a2/dead-letters?contract=orders&limit=ten")
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message).contains("limit"));
		this.http.get().uri("/actuator/a2/events?contract=orders&session=poisoned&after=start")
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message).contains("after"));
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "poisoned", "consumer", "fragile", "index", "first", "action",
					"retry"))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message).contains("index"));
		// digits enough are a whole number all the same: what is wrong with them is their size
		this.http.post().uri("/actuator/a2/redrive").contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"contract\":\"orders\",\"session\":\"poisoned\",\"consumer\":\"fragile\","
					+ "\"index\":99999999999999999999,\"action\":\"retry\"}")
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").isEqualTo("index must be a whole number of at most 9223372036854775807, "
					+ "was '99999999999999999999'");
	}

	/**
	 * operations.md: every operation answers its errors in A2's shape; a body that is no JSON object of
	 * the redrive's fields too, though Boot's endpoint machinery refuses it before the operation runs.
	 * Nothing is redriven.
	 */
	@Test
	void aRedriveWhoseBodyIsNoJsonObjectOfItsFieldsIsRefusedInA2sShapeAndRedrivesNothing() {
		this.a2.session("orders", "malformed-redrive").append(NewEvent.of("poison", new Poison("mercury")));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> this.http.get().uri("/actuator/a2/dead-letters?session=malformed-redrive").exchange()
				.expectBody().jsonPath("$.length()").isEqualTo(1));
		String fields = "\"session\":\"malformed-redrive\",\"consumer\":\"fragile\",\"action\":\"retry\"";
		for (String body : List.of("hello", "[]", "{\"contract\":[\"orders\"],\"index\":1," + fields + "}",
				"{\"contract\":\"orders\",\"index\":{}," + fields + "}")) {
			this.http.post().uri("/actuator/a2/redrive")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue(body)
				.exchange()
				.expectStatus().isBadRequest()
				.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
				.jsonPath("$.error.message").value((message) -> assertThat((String) message).as(body).contains("JSON object"));
		}
		this.http.get().uri("/actuator/a2/dead-letters?session=malformed-redrive").exchange()
			.expectBody().jsonPath("$.length()").isEqualTo(1);
		// discarded, so the other tests count only their own dead letters
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "malformed-redrive", "consumer", "fragile", "index", 1, "action", "skip"))
			.exchange()
			.expectStatus().isOk();
	}

	/**
	 * §11: a redrive with a field it does not have (a flag its sender meant to matter, a misspelt name) is
	 * refused naming that field, and nothing is redriven. Boot hands the operation only the fields it
	 * declares: the redrive was applied as if the field were not there.
	 */
	@Test
	void aRedriveWithAFieldItDoesNotHaveIsRefusedNamingItAndRedrivesNothing() {
		this.a2.session("orders", "unknown-field").append(NewEvent.of("poison", new Poison("lead")));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> this.http.get().uri("/actuator/a2/dead-letters?session=unknown-field").exchange()
				.expectBody().jsonPath("$.length()").isEqualTo(1));
		String fields = "\"contract\":\"orders\",\"session\":\"unknown-field\",\"consumer\":\"fragile\",\"index\":1";
		Map<String, String> refused = Map.of("{" + fields + ",\"action\":\"retry\",\"dryRun\":true}", "'dryRun'",
				"{" + fields + ",\"acton\":\"skip\"}", "'acton'",
				"{" + fields + ",\"action\":\"skip\",\"Index\":2,\"note\":null}", "'Index', 'note'");
		refused.forEach((body, named) -> this.http.post().uri("/actuator/a2/redrive")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message).as(body)
				.startsWith("a redrive has no field " + named + "; its fields are action, consumer, contract, index, session")));
		// a query's fields are the operation's too, as Boot merges them with the body's
		this.http.post().uri("/actuator/a2/redrive?force=yes")
			.bodyValue(Map.of("contract", "orders", "session", "unknown-field", "consumer", "fragile", "index", 1, "action", "skip"))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.message").value((message) -> assertThat((String) message).contains("'force'"));
		this.http.get().uri("/actuator/a2/dead-letters?session=unknown-field").exchange()
			.expectBody().jsonPath("$.length()").isEqualTo(1).jsonPath("$[0].consumer").isEqualTo("fragile");
		assertThat(this.consumers.survived).doesNotContain("lead");
		// discarded, so the other tests count only their own dead letters
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "unknown-field", "consumer", "fragile", "index", 1, "action", "skip"))
			.exchange()
			.expectStatus().isOk();
	}

	/** A misspelt query parameter of a read is refused, naming it, where it once listed every session's. */
	@Test
	void aReadWithAParameterItDoesNotHaveIsRefusedNamingIt() {
		this.http.get().uri("/actuator/a2/dead-letters?contract=orders&sesion=order-1").exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").isEqualTo("this read of the a2 endpoint has no parameter 'sesion'; its parameters are "
					+ "consumer, contract, limit, session");
		// a parameter of another part is no filter of this one: it was read as if it were not there
		this.http.get().uri("/actuator/a2/dead-letters?contract=orders&after=5").exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.message").isEqualTo("this read of the a2 endpoint has no parameter 'after'; its "
					+ "parameters are consumer, contract, limit, session");
		this.http.get().uri("/actuator/a2/events?contract=orders&session=order-1&consumer=shipper").exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.message").isEqualTo("this read of the a2 endpoint has no parameter 'consumer'; its "
					+ "parameters are after, contract, limit, session");
		this.http.get().uri("/actuator/a2?verbose=true").exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.message")
			.isEqualTo("this read of the a2 endpoint has no parameter 'verbose'; its parameters are none");
		this.http.get().uri("/actuator/a2/dead-letters?contract=orders&session=order-1").exchange().expectStatus().isOk();
	}

	/** Another endpoint's unreadable body keeps Boot's answer: A2 speaks for its own endpoint only. */
	@Test
	void anotherEndpointsUnreadableBodyKeepsBootsAnswer() {
		this.http.post().uri("/actuator/loggers/ROOT")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("[]")
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error").isEqualTo("Bad Request").jsonPath("$.status").isEqualTo(400);
	}

	/** As on A2's history route, a limit out of 1-1000 is refused, not served as another page than asked. */
	@Test
	void aLimitOutOfItsBoundsIsRefusedAsOnA2sRoutes() {
		for (String query : List.of("dead-letters?limit=0", "dead-letters?contract=orders&limit=100000", "dead-letters?limit=-2",
				"events?contract=orders&session=poisoned&limit=0", "events?contract=orders&session=poisoned&limit=1001")) {
			this.http.get().uri("/actuator/a2/" + query)
				.exchange()
				.expectStatus().isBadRequest()
				.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
				.jsonPath("$.error.message").value((message) -> assertThat((String) message).as(query)
					.startsWith("limit must be a whole number of 1-1000, was '"));
		}
		this.http.get().uri("/actuator/a2/dead-letters?limit=1000").exchange().expectStatus().isOk();
		this.http.get().uri("/actuator/a2/events?contract=orders&session=poisoned&limit=1").exchange().expectStatus().isOk();
	}

	@Test
	void aRedriveOfAConsumerOrContractThatDoesNotExistIsRefusedAndTagsNoTimer() {
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "poisoned", "consumer", "made-up", "index", 1, "action", "retry"))
			.exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("NOT_FOUND")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message)
				.startsWith("no consumer named 'made-up' is known on contract 'orders'").contains("fragile"));
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "poisoned", "consumer", "made-up", "index", 1, "action", "skip"))
			.exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("NOT_DEAD_LETTERED");
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "made-up", "session", "poisoned", "consumer", "fragile", "index", 1, "action", "skip"))
			.exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("UNKNOWN_CONTRACT");
		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "bad id", "consumer", "fragile", "index", 1, "action", "skip"))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD");
		// the contract and consumer tag the a2.redrive timer: a made-up name would be a timer of its own for ever
		assertThat(this.observations).forAllObservationsWithNameEqualTo(A2Observations.REDRIVE,
				(redrive) -> redrive.doesNotHaveLowCardinalityKeyValue(A2Observations.CONSUMER, "made-up")
					.doesNotHaveLowCardinalityKeyValue(A2Observations.CONTRACT, "made-up"));
	}

	/**
	 * A consumer an earlier version of the application had (run here by a server of its own, gone since)
	 * left a dead letter: the operator discards it with a skip; a retry, which no consumer would run, is
	 * refused and changes nothing.
	 */
	@Test
	void theDeadLetterOfAConsumerNoLongerRegisteredIsDiscardedBySkipNotRetried() {
		Consumer retired = Consumer.builder("orders", "retired").types("poison").run((context) -> {
			throw new NonRetriableException("retired for good");
		});
		try (A2Server earlier = A2Server.builder().dataSource(this.dataSource).contract(this.a2.contract("orders"))
			.consumer(retired)
			.build()) {
			earlier.session("orders", "retired-letter").append(NewEvent.of("poison", new Poison("lead")));
			await().atMost(Duration.ofSeconds(20))
				.until(() -> earlier.deadLetters("orders", "retired-letter", "retired", 10).size() == 1);
		}
		this.http.get().uri("/actuator/a2/dead-letters?contract=orders&session=retired-letter").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$[0].consumer").isEqualTo("retired");

		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "retired-letter", "consumer", "retired", "index", 1, "action",
					"retry"))
			.exchange()
			.expectStatus().isBadRequest()
			.expectBody().jsonPath("$.error.code").isEqualTo("INVALID_PAYLOAD")
			.jsonPath("$.error.message").value((message) -> assertThat((String) message)
				.contains("'retired' is not registered").contains("Skip it to discard it"));
		assertThat(this.a2.deadLetters("orders", "retired-letter", "retired", 10)).hasSize(1);

		this.http.post().uri("/actuator/a2/redrive")
			.bodyValue(Map.of("contract", "orders", "session", "retired-letter", "consumer", "retired", "index", 1, "action",
					"skip"))
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.redriven").isEqualTo(true);
		assertThat(this.a2.deadLetters("orders", "retired-letter", "retired", 10)).isEmpty();
		this.http.get().uri("/actuator/a2/dead-letters?contract=orders&session=retired-letter").exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.length()").isEqualTo(0);
	}

	@Test
	void concurrentRedrivesOfOneDeadLetterApplyOnce() throws Exception {
		Session session = this.a2.session("orders", "poisoned-twice");
		session.append(NewEvent.of("poison", new Poison("hemlock")));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.a2.deadLetters("orders", "poisoned-twice", "fragile", 10).size() == 1);
		List<Callable<Integer>> redrives = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			redrives.add(() -> this.http.post().uri("/actuator/a2/redrive")
				.bodyValue(Map.of("contract", "orders", "session", "poisoned-twice", "consumer", "fragile", "index", 1, "action",
						"skip"))
				.exchange()
				.returnResult(String.class)
				.getStatus()
				.value());
		}
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			List<Integer> statuses = new ArrayList<>();
			for (Future<Integer> status : pool.invokeAll(redrives)) {
				statuses.add(status.get());
			}
			assertThat(statuses).containsOnly(200, 404).filteredOn((status) -> status == 200).hasSize(1);
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(this.a2.deadLetters("orders", "poisoned-twice", "fragile", 10)).isEmpty();
	}

	/** The starter's exception handler knows A2's base path: what no route of A2 takes there answers in A2's shape. */
	@Test
	void aPathOrMethodA2HasNoRouteForAnswersInA2sShape() {
		this.http.get().uri("/a2/orders/sessions/s").exchange()
			.expectStatus().isEqualTo(405)
			.expectHeader().valueEquals("Allow", "DELETE")
			.expectBody().jsonPath("$.error.code").isEqualTo("METHOD_NOT_ALLOWED");
		this.http.get().uri("/a2/orders/nothing-here").exchange()
			.expectStatus().isNotFound()
			.expectBody().jsonPath("$.error.code").isEqualTo("NOT_FOUND");
	}

	@Test
	void healthReportsTheStoreAndTheSweep() {
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> this.http.get().uri("/actuator/health/a2").exchange().expectStatus().isOk().expectBody()
				.jsonPath("$.status").isEqualTo("UP")
				.jsonPath("$.details.store").isEqualTo("reachable")
				.jsonPath("$.details.lastSweep").value((String last) -> assertThat(last).isNotEqualTo("none yet")));
	}

	private List<String> shipped(Session session) {
		return session.history(0, 100)
			.events()
			.stream()
			.filter((e) -> e.type().equals("order.shipped"))
			.map(Event::payload)
			.map((p) -> ((OrdersApplication.OrderShipped) p).sku())
			.toList();
	}

}
