package dev.a2;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.a2.TestContracts.MessageSent;
import dev.a2.TestContracts.Note;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.a2.TestContracts.message;
import static dev.a2.TestContracts.note;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Takeover after a crash with the default 30 s lease: an instance whose connections die is seen gone
 * by PostgreSQL (its liveness lock ends with its backend), and another instance's sweep takes its
 * runs over at once. The test's clock never moves, so no lease ever lapses: what is taken over here
 * is taken over for the liveness alone, and within a deadline far shorter than the lease.
 */
class TakeoverIntegrationTests {

	/** Well inside the default 30 s lease: a takeover by lease lapse could not make it. */
	private static final Duration WELL_BEFORE_THE_LEASE = Duration.ofSeconds(10);

	private static final String VICTIM = "a2-victim";

	private final DrainTestSupport support = new DrainTestSupport("takeover");

	private final HikariDataSource victimPool = victimPool(this.support.dataSource);

	@AfterEach
	void close() {
		this.support.close();
		this.victimPool.close();
	}

	@Test
	void anInstanceWhoseConnectionsAreKilledIsTakenOverInSecondsAndItsZombieCommitsNothing() throws Exception {
		CountDownLatch zombieStarted = new CountDownLatch(1);
		CountDownLatch releaseZombie = new CountDownLatch(1);
		CountDownLatch zombieReturned = new CountDownLatch(1);
		AtomicReference<A2Exception> zombieReason = new AtomicReference<>();
		Consumer worker = Consumer.builder("chat", "worker").types("message.sent").run((context) -> {
			context.session().append("effect", note("charged the card"));
			if (context.attempt() == 1) {
				context.signal().onAbort(() -> zombieReason.set(context.signal().reason()));
				zombieStarted.countDown();
				// a run that takes no notice of its signal: only fencing keeps what it returns out
				awaitIgnoringInterrupts(releaseZombie);
				zombieReturned.countDown();
				return note("from the zombie");
			}
			return note("receipt");
		});
		A2Server victim = victim(worker);
		A2Server survivor = this.support.server(DrainSettings.DEFAULTS, worker);
		String id = A2TestSupport.newSessionId();
		victim.session("chat", id).append(message("pay"));
		assertThat(zombieStarted.await(20, TimeUnit.SECONDS)).isTrue();
		// read through the survivor: the victim's connections are about to die
		Session session = survivor.session("chat", id);

		try (LogCapture log = new LogCapture()) {
			assertThat(killBackendsOf(VICTIM)).isPositive();
			// the survivor's sweep, as its scheduler runs it every second
			await().atMost(WELL_BEFORE_THE_LEASE)
				.pollInterval(Duration.ofMillis(200))
				.until(() -> survivor.sweep() >= 0 && noteTexts(session).contains("receipt"));
			// the operator reads that a crashed instance's run was taken over, once
			assertThat(log.lines("Took over 1 consumer claim(s) of instances PostgreSQL no longer sees alive")).hasSize(1);
		}

		// its own instance saw its identity end with the connection, and stops what it claimed under it
		await().atMost(Duration.ofSeconds(20)).until(() -> zombieReason.get() != null);
		assertThat(zombieReason.get().code()).isEqualTo(ErrorCode.CLAIM_EXPIRED);
		releaseZombie.countDown();
		assertThat(zombieReturned.await(20, TimeUnit.SECONDS)).isTrue();
		await().atMost(Duration.ofSeconds(20)).until(() -> victim.drainer().running() == 0);
		assertThat(noteTexts(session)).containsExactly("charged the card", "receipt");
		List<Event> events = session.history(0, 10).events();
		assertThat(events.get(events.size() - 1).cause().attempt()).isEqualTo(2);
		assertThat(this.support.count("SELECT count(*) FROM a2_work WHERE session_id = ?", session.id())).isZero();
	}

	@Test
	void anInstanceThatLosesOnlyItsLivenessConnectionStopsItsRunsLetsThemBeTakenOverAndWorksOnAsANewInstance()
			throws Exception {
		AtomicReference<A2Exception> victimReason = new AtomicReference<>();
		List<String> ranBy = new java.util.concurrent.CopyOnWriteArrayList<>();
		CountDownLatch victimStarted = new CountDownLatch(1);
		Consumer victimWorker = Consumer.builder("chat", "worker").types("message.sent").run((context) -> {
			String text = context.event().payload(MessageSent.class).text();
			ranBy.add("victim:" + text + "@" + context.attempt());
			if (text.equals("long")) {
				victimStarted.countDown();
				TestContracts.blockUntilAborted();
				victimReason.set(context.signal().reason());
			}
			return note("done " + text + " by the victim");
		});
		Consumer survivorWorker = Consumer.builder("chat", "worker").types("message.sent").run((context) -> {
			String text = context.event().payload(MessageSent.class).text();
			ranBy.add("survivor:" + text + "@" + context.attempt());
			return note("done " + text + " by the survivor");
		});
		A2Server victim = victim(victimWorker);
		A2Server survivor = this.support.server(DrainSettings.DEFAULTS, survivorWorker);
		String id = A2TestSupport.newSessionId();
		victim.session("chat", id).append(message("long"));
		assertThat(victimStarted.await(20, TimeUnit.SECONDS)).isTrue();
		Session session = survivor.session("chat", id);
		int owner = this.support.jdbc()
			.sql("SELECT owner FROM a2_work WHERE session_id = ?")
			.param(id)
			.query(Integer.class)
			.single();

		assertThat(this.support.jdbc()
			.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory' AND objid = ?::oid")
			.param(owner)
			.query(Long.class)
			.single()).isEqualTo(1);
		await().atMost(WELL_BEFORE_THE_LEASE)
			.pollInterval(Duration.ofMillis(200))
			.until(() -> survivor.sweep() >= 0 && noteTexts(session).contains("done long by the survivor"));
		await().atMost(Duration.ofSeconds(20)).until(() -> victimReason.get() != null);
		assertThat(victimReason.get().code()).isEqualTo(ErrorCode.CLAIM_EXPIRED);

		// the victim took a new identity (a lock of its own again, beside the survivor's) and works on
		await().atMost(Duration.ofSeconds(20)).until(() -> this.support.jdbc()
			.sql("""
					SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND objid <> ?::oid
					  AND classid = (hashtext(current_schema()) & 2147483647)::oid""")
			.param(owner)
			.query(Long.class)
			.single() == 2);
		Session next = victim.session("chat", A2TestSupport.newSessionId());
		next.append(message("next"));
		await().atMost(Duration.ofSeconds(20)).until(() -> noteTexts(next).contains("done next by the victim"));
		assertThat(noteTexts(session)).containsExactly("done long by the survivor");
		assertThat(ranBy).contains("victim:long@1", "survivor:long@2");
	}

	private A2Server victim(Consumer worker) {
		return A2TestSupport.server(this.victimPool)
			.clock(this.support.clock)
			.drain(DrainSettings.DEFAULTS)
			.stopGrace(Duration.ofSeconds(1))
			.consumer(worker)
			.build();
	}

	/** Ends every backend of the connections named {@code application}, as a crash of that process would. */
	private long killBackendsOf(String application) {
		return this.support.jdbc()
			.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?")
			.param(application)
			.query(Long.class)
			.single();
	}

	private static List<String> noteTexts(Session session) {
		return session.history(0, 100)
			.events()
			.stream()
			.filter((e) -> e.type().equals("note"))
			.map((e) -> e.payload(Note.class).text())
			.toList();
	}

	private static void awaitIgnoringInterrupts(CountDownLatch latch) {
		while (true) {
			try {
				if (latch.await(60, TimeUnit.SECONDS)) {
					return;
				}
			}
			catch (InterruptedException ex) {
				// the abort interrupts the run; this one goes on regardless
			}
		}
	}

	/** A second pool on the test's schema, its connections named so that they can be found and killed. */
	private static HikariDataSource victimPool(HikariDataSource like) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(like.getJdbcUrl());
		config.setUsername(TestPostgres.server().username());
		config.setPassword(TestPostgres.server().password());
		config.setMaximumPoolSize(10);
		config.setConnectionTimeout(5_000);
		config.addDataSourceProperty("ApplicationName", VICTIM);
		return new HikariDataSource(config);
	}

}
