package dev.a2;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.a2.TestContracts.MessageSent;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static dev.a2.TestContracts.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * An append made on an instance that runs its consumers stores their independent-lane units already
 * leased to that instance, and the runs start as it commits, with no claim in between. What must
 * not change: each unit runs once, no more runs at once than the concurrency, and an append that
 * fails or repeats an id starts nothing and keeps no permit. An instance that dies between the
 * commit and the run is taken over as any claim's is ({@link TakeoverIntegrationTests}: its victim
 * appends).
 */
class AppendLeaseIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private final DrainTestSupport support = new DrainTestSupport("lease_ahead");

	@AfterEach
	void halt() {
		this.support.close();
	}

	@Test
	void aUnitAppendedHereRunsItsFirstAttemptWithoutAClaim() {
		assumeFalse(A2TestSupport.onCitus(this.support.dataSource),
				"no lease ahead on Citus: a2_append stores units unclaimed, and they are claimed per session");
		Map<String, List<Integer>> attempts = new ConcurrentHashMap<>();
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent").run((context) -> {
			attempts.computeIfAbsent(context.event().id(), (id) -> new CopyOnWriteArrayList<>()).add(context.attempt());
			return null;
		});
		A2Server server = this.support.server(echo);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		for (int i = 0; i < 5; i++) {
			session.append(message("m" + i, "m" + i));
		}

		await().atMost(WAIT).untilAsserted(() -> assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero());
		assertThat(attempts).hasSize(5).allSatisfy((id, seen) -> assertThat(seen).as(id).containsExactly(1));
		TestObservationRegistryAssert.assertThat(this.support.observations)
			.hasNumberOfObservationsWithNameEqualTo(A2Observations.CLAIM, 0);
	}

	@Test
	void anAppendInsideATransactionLeavesItsUnitsToBeClaimedAfterTheCommit() {
		AtomicInteger runs = new AtomicInteger();
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent").run((context) -> {
			runs.incrementAndGet();
			return null;
		});
		A2Server server = this.support.server(echo);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		new TransactionTemplate(new DataSourceTransactionManager(this.support.dataSource))
			.executeWithoutResult((status) -> session.append(message("in a transaction")));

		await().atMost(WAIT).untilAsserted(() -> assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero());
		assertThat(runs).hasValue(1);
		TestObservationRegistryAssert.assertThat(this.support.observations)
			.hasObservationWithNameEqualTo(A2Observations.CLAIM);
	}

	@Test
	void withNoPermitFreeTheUnitWaitsForOneAndEachRunsOnceNoMoreAtOnceThanTheConcurrency() throws Exception {
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger running = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		List<String> ran = new CopyOnWriteArrayList<>();
		Consumer slow = Consumer.builder("chat", "slow").types("message.sent").run((context) -> {
			most.accumulateAndGet(running.incrementAndGet(), Math::max);
			try {
				release.await(30, TimeUnit.SECONDS);
				ran.add(context.event().payload(MessageSent.class).text());
			}
			finally {
				running.decrementAndGet();
			}
			return null;
		});
		A2Server server = this.support.server(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withConcurrency(2),
				slow);
		Session first = server.session("chat", A2TestSupport.newSessionId());
		Session second = server.session("chat", A2TestSupport.newSessionId());
		first.append(message("a"), message("b"));
		// both permits are held by the first session's runs: these units are stored unleased
		second.append(message("c"), message("d"), message("e"));
		await().atMost(WAIT).until(() -> running.get() == 2);
		assertThat(this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ? AND claim IS NULL", second.id()))
			.isEqualTo(3);
		release.countDown();

		await().atMost(WAIT).untilAsserted(() -> assertThat(ran).hasSize(5));
		assertThat(ran).containsExactlyInAnyOrder("a", "b", "c", "d", "e");
		assertThat(most).hasValue(2);
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero());
	}

	@Test
	void anAppendThatRepeatsAnIdStartsNothingAndKeepsNoPermit() {
		List<String> ran = new CopyOnWriteArrayList<>();
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent").run((context) -> {
			ran.add(context.event().id());
			return null;
		});
		A2Server server = this.support.server(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withConcurrency(1),
				echo);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("once", "once"));
		await().atMost(WAIT).untilAsserted(() -> assertThat(ran).containsExactly("once"));
		for (int i = 0; i < 3; i++) {
			assertThat(session.append(message("once", "once")).get(0).index()).isEqualTo(1);
		}
		// with the one permit kept by a retry, this would never run
		session.append(message("next", "next"));

		await().atMost(WAIT).untilAsserted(() -> assertThat(ran).containsExactly("once", "next"));
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero());
	}

	@Test
	void anAppendTheDatabaseRefusesStoresNothingAndKeepsNoPermit() {
		assumeFalse(A2TestSupport.onCitus(this.support.dataSource), "a trigger on a2_event, on one PostgreSQL");
		this.support.jdbc().sql("""
				CREATE FUNCTION refuse_on_request() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
				    IF NEW.payload->>'text' = 'refused' THEN
				        RAISE EXCEPTION 'refused by the test';
				    END IF;
				    RETURN NEW;
				END $$;
				CREATE TRIGGER refuse_on_request BEFORE INSERT ON a2_event FOR EACH ROW EXECUTE FUNCTION refuse_on_request();
				""").update();
		List<String> ran = new CopyOnWriteArrayList<>();
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent").run((context) -> {
			ran.add(context.event().payload(MessageSent.class).text());
			return null;
		});
		A2Server server = this.support.server(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withConcurrency(1),
				echo);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		for (int i = 0; i < 3; i++) {
			assertThatThrownBy(() -> session.append(message("fine"), message("refused"))).hasMessageContaining("refused by the test");
		}
		assertThat(this.support.count("SELECT count(*) FROM a2_work")).isZero();
		session.append(message("after"));

		await().atMost(WAIT).untilAsserted(() -> assertThat(ran).containsExactly("after"));
	}

}
