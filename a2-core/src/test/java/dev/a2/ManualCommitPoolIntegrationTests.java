package dev.a2;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.a2.TestContracts.MessageSent;
import dev.a2.TestContracts.Note;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.test.MutableClock;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static dev.a2.TestContracts.message;
import static dev.a2.TestContracts.note;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A2 on a pool whose connections are not in auto-commit mode ({@code spring.datasource.hikari.auto-commit=false},
 * a common Hibernate tuning), where HikariCP rolls back what a connection wrote outside a
 * transaction when it goes back to the pool. What A2 wrote is read through an ordinary auto-commit
 * pool on the same schema, as another instance (or the user) would see it.
 */
class ManualCommitPoolIntegrationTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration WAIT = Duration.ofSeconds(20);

	private final HikariDataSource autoCommit = TestPostgres.newSchemaDataSource("manual-commit", 5);

	private final HikariDataSource manualCommit = manualCommit(this.autoCommit);

	private final MutableClock clock = new MutableClock();

	/** An instance on the auto-commit pool, without consumers: it sees only what was committed. */
	private final A2Server observer = A2TestSupport.server(this.autoCommit).clock(this.clock).build();

	private final List<A2Server> servers = new ArrayList<>();

	ManualCommitPoolIntegrationTests() {
		PostgresSchema.migrate(this.manualCommit);
	}

	@AfterEach
	void close() {
		this.servers.forEach(A2Server::halt);
		this.manualCommit.close();
		this.autoCommit.close();
	}

	@Test
	void appendedEventsAreDrainedOnceAndAConsumerAddedLaterBackfillsThem() {
		AtomicInteger runs = new AtomicInteger();
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent").run((context) -> {
			runs.incrementAndGet();
			return note("echo of " + context.event().payload(MessageSent.class).text());
		});
		Session session = server(echo).session("chat", A2TestSupport.newSessionId());
		List<Event> sent = new ArrayList<>(session.append(message("a"), message("b")));
		// the echo of "a" may be returned before "c" is appended, and take the index after "b"
		sent.addAll(session.append(message("c")));

		assertThat(seen(session).history(0, 10).events()).filteredOn((e) -> e.type().equals("message.sent"))
			.extracting((e) -> e.payload(MessageSent.class).text())
			.containsExactly("a", "b", "c");
		await().atMost(WAIT).untilAsserted(() -> assertThat(notes(session)).containsExactlyInAnyOrder("echo of a", "echo of b",
				"echo of c"));
		await().atMost(WAIT).untilAsserted(() -> assertThat(count("SELECT count(*) FROM a2_work WHERE session_id = ?",
				session.id())).isZero());
		assertThat(runs.get()).isEqualTo(3);

		List<Long> backfilled = new CopyOnWriteArrayList<>();
		Consumer late = Consumer.builder("chat", "late")
			.types("message.sent")
			.lane(Lane.fixed("all"))
			.backfill(true)
			.run((context) -> {
				backfilled.add(context.event().index());
				return null;
			});
		server(late).sweep();
		await().atMost(WAIT).untilAsserted(() -> assertThat(backfilled)
			.containsExactlyElementsOf(sent.stream().map(Event::index).toList()));
	}

	@Test
	void aDeadLetterRedrivenWithRetryIsHandled() {
		AtomicBoolean healthy = new AtomicBoolean();
		Consumer strict = Consumer.builder("chat", "strict").types("message.sent").run((context) -> {
			if (!healthy.get()) {
				throw new NonRetriableException("not yet");
			}
			return note("handled " + context.event().payload(MessageSent.class).text());
		});
		A2Server server = server(strict);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("poison"));
		await().atMost(WAIT)
			.untilAsserted(() -> assertThat(this.observer.deadLetters("chat", session.id(), "strict", 10)).hasSize(1));

		healthy.set(true);
		assertThat(server.redrive("chat", session.id(), "strict", 1, RedriveAction.RETRY)).isTrue();
		await().atMost(WAIT).untilAsserted(() -> assertThat(notes(session)).containsExactly("handled poison"));
		assertThat(this.observer.deadLetters("chat", session.id(), "strict", 10)).isEmpty();
	}

	@Test
	void aGracefulStopReleasesTheClaimsOfTheRunsItAbortsForAnotherInstanceAtOnce() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		Consumer stuck = Consumer.builder("chat", "stuck").types("message.sent").run((context) -> {
			if (context.attempt() == 1) {
				started.countDown();
				TestContracts.blockUntilAborted();
				return note("never");
			}
			return note("done by attempt " + context.attempt());
		});
		A2Server stopping = A2TestSupport.server(this.manualCommit)
			.clock(this.clock)
			.drain(DrainSettings.DEFAULTS.withLease(LEASE))
			.stopGrace(Duration.ofMillis(200))
			.consumer(stuck)
			.build();
		this.servers.add(stopping);
		Session session = stopping.session("chat", A2TestSupport.newSessionId());
		session.append(message("stuck"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();

		stopping.close();
		assertThat(count("SELECT count(*) FROM a2_work WHERE session_id = ? AND (claim IS NOT NULL OR lease_until IS NOT NULL)",
				session.id())).as("claims and leases left").isZero();
		// the clock stands still: only a released claim lets another instance run the unit now
		server(stuck).sweep();
		await().atMost(WAIT).untilAsserted(() -> assertThat(notes(session)).containsExactly("done by attempt 2"));
	}

	@Test
	void theHeartbeatRenewsTheLeaseOfASlowRun() throws Exception {
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		Consumer slow = Consumer.builder("chat", "slow").types("message.sent").run((context) -> {
			started.countDown();
			finish.await(60, TimeUnit.SECONDS);
			return note("slow done");
		});
		A2Server server = server(slow);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("slow"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
		Instant claimed = leaseUntil(session.id());

		this.clock.advance(Duration.ofSeconds(20));
		server.drainer().heartbeat();
		assertThat(leaseUntil(session.id())).isAfter(claimed).isEqualTo(this.clock.instant().plus(LEASE));
		finish.countDown();
		await().atMost(WAIT).untilAsserted(() -> assertThat(notes(session)).containsExactly("slow done"));
	}

	@Test
	void aUnitWhoseLastAttemptDiedIsDeadLettered() throws Exception {
		DrainSettings settings = DrainSettings.DEFAULTS.withLease(LEASE).withMaxFailures(1);
		CountDownLatch started = new CountDownLatch(1);
		Consumer hanging = Consumer.builder("chat", "hanging").types("message.sent").run((context) -> {
			started.countDown();
			TestContracts.blockUntilAborted();
			return null;
		});
		A2Server crashing = server(settings, hanging);
		Session session = crashing.session("chat", A2TestSupport.newSessionId());
		session.append(message("hang"));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
		crashing.halt();

		this.clock.advance(LEASE.plusSeconds(1));
		server(settings, hanging).sweep();
		assertThat(this.observer.deadLetters("chat", session.id(), "hanging", 10)).singleElement()
			.satisfies((letter) -> assertThat(letter.lastError()).isEqualTo("every attempt ended before it finished"));
	}

	@Test
	void readsSaveSnapshotsThatTheNextReadStartsFrom() {
		Session session = server().session("chat", A2TestSupport.newSessionId());
		for (int i = 0; i < 25; i++) {
			session.append(message("m" + i));
		}
		assertThat(session.state("count").state()).isEqualTo(25);
		assertThat(snapshotIndexes(session.id())).containsExactly(10L, 20L);

		int before = TestContracts.folds.get();
		assertThat(server().session("chat", session.id()).state("count").state()).isEqualTo(25);
		assertThat(TestContracts.folds.get() - before).as("events folded after the snapshot of 20").isEqualTo(5);
	}

	@Test
	void aClearDeletesTheSnapshotsBeforeIt() {
		A2Server autoCommitted = A2TestSupport.server(this.autoCommit).snapshotEvery(10).stateCacheSize(0).build();
		Session written = autoCommitted.session("chat", A2TestSupport.newSessionId());
		for (int i = 0; i < 20; i++) {
			written.append(message("m" + i));
		}
		written.state("count");
		assertThat(snapshotIndexes(written.id())).containsExactly(10L, 20L);

		server().session("chat", written.id()).clear();
		assertThat(snapshotIndexes(written.id())).isEmpty();
	}

	@Test
	void expiredPresenceIsDeletedBySweeps() {
		A2Server server = server();
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.presence(PresenceWrite.of("ann", Map.of("typing", true)));
		assertThat(this.observer.session("chat", session.id()).presence().participants()).containsOnlyKeys("ann");

		this.clock.advance(Duration.ofSeconds(61));
		server.sweep();
		assertThat(count("SELECT count(*) FROM a2_presence WHERE session_id = ?", session.id())).isZero();
	}

	@Test
	void aScheduledClearIsDelivered() {
		A2Server server = server(Consumer.builder("chat", "idle").types("note").run((context) -> null));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("a"));
		session.scheduleClear("expire", this.clock.instant().plus(Duration.ofMinutes(30)), 1L);

		this.clock.advance(Duration.ofMinutes(31));
		server.sweep();
		HistoryPage history = seen(session).history(0, 10);
		assertThat(history.events()).isEmpty();
		assertThat(history.head()).as("the index of the clear marker").isEqualTo(2);
	}

	/** A server on the manual-commit pool with the given consumers and the test's clock. */
	private A2Server server(Consumer... consumers) {
		return server(DrainSettings.DEFAULTS.withLease(LEASE), consumers);
	}

	private A2Server server(DrainSettings settings, Consumer... consumers) {
		A2Server.Builder builder = A2TestSupport.server(this.manualCommit)
			.clock(this.clock)
			.drain(settings)
			.presenceTtl(Duration.ofSeconds(60))
			.snapshotEvery(10)
			.stateCacheSize(0)
			.stopGrace(Duration.ofSeconds(5));
		for (Consumer consumer : consumers) {
			builder.consumer(consumer);
		}
		A2Server server = builder.build();
		this.servers.add(server);
		return server;
	}

	/** The session as the observer on the auto-commit pool sees it. */
	private Session seen(Session session) {
		return this.observer.session("chat", session.id());
	}

	private List<String> notes(Session session) {
		return seen(session).history(0, 1000)
			.events()
			.stream()
			.filter((e) -> e.type().equals("note"))
			.map((e) -> e.payload(Note.class).text())
			.toList();
	}

	private long count(String sql, Object... params) {
		return JdbcClient.create(this.autoCommit).sql(sql).params(params).query(Long.class).single();
	}

	private Instant leaseUntil(String session) {
		return JdbcClient.create(this.autoCommit)
			.sql("SELECT lease_until FROM a2_work WHERE session_id = ?")
			.param(session)
			.query(OffsetDateTime.class)
			.single()
			.toInstant();
	}

	private List<Long> snapshotIndexes(String session) {
		return JdbcClient.create(this.autoCommit)
			.sql("SELECT idx FROM a2_state_snapshot WHERE session_id = ? AND reducer = 'count' ORDER BY idx")
			.param(session)
			.query(Long.class)
			.list();
	}

	/** The same database as {@code autoCommit}, through connections that are not in auto-commit mode. */
	private static HikariDataSource manualCommit(HikariDataSource autoCommit) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(autoCommit.getJdbcUrl());
		config.setUsername(autoCommit.getUsername());
		config.setPassword(autoCommit.getPassword());
		config.setMaximumPoolSize(20);
		config.setConnectionTimeout(5_000);
		config.setAutoCommit(false);
		return new HikariDataSource(config);
	}

}
