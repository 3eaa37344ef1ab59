package dev.a2.store.postgres;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.live.SessionChange;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** LISTEN/NOTIFY between two instances, and the listener coming back by itself when its connection dies. */
class PostgresSessionChangesIntegrationTests {

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("session_changes_pg", 6);

	private final PostgresSessionChanges here = new PostgresSessionChanges(this.dataSource);

	private final PostgresSessionChanges there = new PostgresSessionChanges(this.dataSource);

	private final List<SessionChange> heard = new CopyOnWriteArrayList<>();

	private final AtomicInteger resyncs = new AtomicInteger();

	@AfterEach
	void close() {
		this.here.close();
		this.there.close();
		this.dataSource.close();
	}

	@Test
	void aChangePublishedOnOneInstanceIsHeardOnTheOtherAndOnItselfOnce() {
		List<SessionChange> own = new CopyOnWriteArrayList<>();
		listen();
		this.here.listen((change) -> {
			if (change != null) {
				own.add(change);
			}
		});
		awaitConnected();
		this.here.publish(SessionChange.Kind.WORK, "chat", "room:1~a");
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.heard.isEmpty());
		assertThat(this.heard).containsExactly(new SessionChange(SessionChange.Kind.WORK, "chat", "room:1~a", false));
		assertThat(own).containsExactly(new SessionChange(SessionChange.Kind.WORK, "chat", "room:1~a", true));
	}

	@Test
	void anInstanceWhosePoolDoesNotAutoCommitStillSendsItsNotices() {
		try (HikariDataSource manual = new HikariDataSource()) {
			manual.setJdbcUrl(this.dataSource.getJdbcUrl());
			manual.setUsername(this.dataSource.getUsername());
			manual.setPassword(this.dataSource.getPassword());
			manual.setAutoCommit(false);
			PostgresSessionChanges sender = new PostgresSessionChanges(manual);
			try {
				listen();
				await().atMost(Duration.ofSeconds(10)).until(() -> sender.connected() && this.there.connected());
				sender.publish(SessionChange.Kind.EVENTS, "chat", "from-manual");
				await().atMost(Duration.ofSeconds(10))
					.until(() -> this.heard.contains(new SessionChange(SessionChange.Kind.EVENTS, "chat", "from-manual", false)));
			}
			finally {
				sender.close();
			}
		}
	}

	@Test
	void theListenerComesBackAfterItsConnectionIsKilledAndSaysChangesMayHaveBeenMissed() {
		listen();
		awaitConnected();
		int before = this.resyncs.get();
		JdbcClient.create(this.dataSource)
			.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN "
					+ PostgresSessionChanges.CHANNEL + "' AND pid <> pg_backend_pid()")
			.query((rs) -> {
			});
		// lost (readers are told to read everything again), then back (told again)
		await().atMost(Duration.ofSeconds(20)).until(() -> this.resyncs.get() >= before + 2 && this.there.connected());
		this.here.publish(SessionChange.Kind.EVENTS, "chat", "after-restart");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.heard.stream().anyMatch((c) -> c.session().equals("after-restart")));
	}

	private void listen() {
		this.there.listen((change) -> {
			if (change == null) {
				this.resyncs.incrementAndGet();
			}
			else if (!change.local()) {
				this.heard.add(change);
			}
		});
	}

	private void awaitConnected() {
		await().atMost(Duration.ofSeconds(10)).until(() -> this.here.connected() && this.there.connected());
	}

}
