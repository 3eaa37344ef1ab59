package dev.a2;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.a2.store.WorkStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.a2.TestContracts.message;
import static dev.a2.TestContracts.note;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a test of its own time needs of the drainer: events stamped by the server's clock, when work
 * next falls due, a wait on the drainer's own progress, and runs it can intercept.
 */
class DrainSeamsIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private final DrainTestSupport support = new DrainTestSupport("seams");

	@AfterEach
	void halt() {
		this.support.close();
	}

	@Test
	void eventsAndClearMarkersAreStampedByTheServersClock() {
		A2Server server = this.support.manualServer(Consumer.builder("chat", "idle").types("note").run((context) -> null));
		Session session = server.session("chat", A2TestSupport.newSessionId());
		Instant first = this.support.clock.instant();

		Event appended = session.append(message("hello")).get(0);
		this.support.clock.advance(Duration.ofDays(3));
		session.clear();

		assertThat(appended.createdAt()).isEqualTo(first);
		assertThat(session.history(0, 10).events()).isEmpty();
		assertThat(this.support.jdbc().sql("SELECT created_at FROM a2_event WHERE session_id = ? ORDER BY idx")
			.param(session.id())
			.query(java.time.OffsetDateTime.class)
			.list()).extracting(java.time.OffsetDateTime::toInstant).containsExactly(first, first.plus(Duration.ofDays(3)));
	}

	@Test
	void aFailedUnitIsDueWhenItsBackOffEndsAndTheDrainerSaysWhenItIsIdle() {
		Consumer flaky = Consumer.builder("chat", "flaky").types("message.sent").run((context) -> {
			if (context.attempt() == 1) {
				throw new IllegalStateException("not yet");
			}
			return note("done");
		});
		A2Server server = this.support.manualServer(flaky);
		Session session = server.session("chat", A2TestSupport.newSessionId());

		session.append(message("try"));
		assertThat(server.awaitDrain(DrainActivity::idle, WAIT)).isTrue();

		Instant retryAt = this.support.clock.instant().plus(Duration.ofSeconds(1));
		assertThat(server.nextDue()).contains(retryAt);
		assertThat(server.upcomingWork(10)).singleElement().satisfies((work) -> {
			assertThat(work.consumer()).isEqualTo("flaky");
			assertThat(work.failures()).isEqualTo(1);
			assertThat(work.runnableAt()).isEqualTo(retryAt);
			assertThat(work.lastError()).contains("not yet");
		});
		assertThat(server.sweep()).isZero();

		this.support.clock.advance(Duration.ofSeconds(1));
		assertThat(server.sweep()).isEqualTo(1);
		assertThat(server.awaitDrain(DrainActivity::idle, WAIT)).isTrue();
		assertThat(server.upcomingWork(10)).isEmpty();
		assertThat(server.nextDue()).isEmpty();
		assertThat(this.support.ids(session.id(), "note")).hasSize(1);
	}

	@Test
	void anInterceptorSeesEveryRunAndAnAbandonedAttemptIsRunAgainOnceItsLeaseLapses() {
		List<Integer> attempts = new CopyOnWriteArrayList<>();
		Consumer worker = Consumer.builder("chat", "worker").types("message.sent").run((context) -> {
			context.session().append("effect", note("effect"));
			return note("result");
		});
		A2Server server = A2TestSupport.server(this.support.dataSource)
			.clock(this.support.clock)
			.drainScheduling(DrainScheduling.MANUAL)
			.drain(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE))
			.consumer(worker)
			.runInterceptor((run) -> {
				attempts.add(run.attempt());
				Object result = run.proceed();
				if (run.attempt() == 1) {
					run.abandon();
				}
				return result;
			})
			.build();
		try {
			Session session = server.session("chat", A2TestSupport.newSessionId());
			session.append(message("work"));
			assertThat(server.awaitDrain(DrainActivity::idle, WAIT)).isTrue();

			WorkStore.Upcoming held = server.upcomingWork(10).get(0);
			assertThat(held.leaseUntil()).isEqualTo(this.support.clock.instant().plus(DrainTestSupport.LEASE));
			assertThat(server.nextDue()).contains(held.leaseUntil().plusNanos(1000));
			assertThat(this.support.ids(session.id(), "note")).hasSize(1);

			this.support.clock.advance(DrainTestSupport.LEASE.plusSeconds(1));
			server.sweep();
			assertThat(server.awaitDrain(DrainActivity::idle, WAIT)).isTrue();

			assertThat(attempts).containsExactly(1, 2);
			assertThat(this.support.ids(session.id(), "note")).hasSize(2);
			assertThat(server.upcomingWork(10)).isEmpty();
		}
		finally {
			server.close();
		}
	}

}
