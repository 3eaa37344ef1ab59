package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.LogCapture;
import dev.a2.live.SessionChange;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * LISTEN/NOTIFY between instances: a change heard on the others, the listener coming back by itself
 * when its connection dies, no notice sent while no other instance listens, and events and presence
 * told only to the instances that follow the session.
 */
class PostgresSessionChangesIntegrationTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final HikariDataSource dataSource = TestPostgres.newSchemaDataSource("session_changes_pg", 8);

	private final List<AutoCloseable> started = new ArrayList<>();

	private final List<SessionChange> heard = new CopyOnWriteArrayList<>();

	private final AtomicInteger resyncs = new AtomicInteger();

	@AfterEach
	void close() throws Exception {
		for (int i = this.started.size() - 1; i >= 0; i--) {
			this.started.get(i).close();
		}
		this.dataSource.close();
	}

	@Test
	void aChangePublishedOnOneInstanceIsHeardOnTheOtherAndOnItselfOnce() {
		PostgresSessionChanges here = start();
		PostgresSessionChanges there = start();
		List<SessionChange> own = new CopyOnWriteArrayList<>();
		listen(there);
		here.listen((change) -> {
			if (change != null) {
				own.add(change);
			}
		});
		awaitConnected(here, there);
		here.publish(SessionChange.Kind.WORK, "chat", "room:1~a");
		await().atMost(WAIT).until(() -> !this.heard.isEmpty());
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
				PostgresSessionChanges there = start();
				listen(there);
				awaitConnected(sender, there);
				sender.publish(SessionChange.Kind.WORK, "chat", "from-manual");
				await().atMost(WAIT)
					.until(() -> this.heard.contains(new SessionChange(SessionChange.Kind.WORK, "chat", "from-manual", false)));
			}
			finally {
				sender.close();
			}
		}
	}

	@Test
	void theListenerComesBackAfterItsConnectionIsKilledAndSaysChangesMayHaveBeenMissed() {
		try (LogCapture log = new LogCapture()) {
			listenerComesBack(log);
		}
	}

	private void listenerComesBack(LogCapture log) {
		PostgresSessionChanges here = start();
		PostgresSessionChanges there = start();
		listen(there);
		awaitConnected(here, there);
		there.follow("chat", "followed-across-restarts");
		await().atMost(WAIT).until(() -> here.followedElsewhere("chat", "followed-across-restarts")
				&& !here.followedElsewhere("chat", "followed-nowhere"));
		int before = this.resyncs.get();
		// the listening connections of this schema's instances: they hold its listeners' locks
		JdbcClient.create(this.dataSource)
			.sql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 "
					+ "AND classid = " + ListeningInstances.SPACE + "::bigint::oid")
			.query((rs) -> {
			});
		// lost (readers are told to read everything again), then back (told again)
		await().atMost(Duration.ofSeconds(20)).until(() -> this.resyncs.get() >= before + 2 && there.connected());
		await().atMost(WAIT).until(here::connected);
		here.publish(SessionChange.Kind.WORK, "chat", "after-restart");
		await().atMost(WAIT).until(() -> this.heard.stream().anyMatch((c) -> c.session().equals("after-restart")));
		// the follow is told again under the listener's new id (and not merely assumed, as before an answer)
		await().atMost(WAIT).until(() -> here.followedElsewhere("chat", "followed-across-restarts")
				&& !here.followedElsewhere("chat", "followed-nowhere"));
		// an operator who read that the connection was lost reads that it is back
		assertThat(log.lines("Lost the connection that listens for changes of other instances")).hasSize(2);
		assertThat(log.lines("Listening again for changes of other instances")).hasSize(2)
			.allSatisfy((line) -> assertThat(line).containsPattern("\\d+ ms after the connection was lost"));
	}

	@Test
	void closingHandsTheListeningConnectionBackToThePoolNotListeningAndWithoutItsLock() {
		PostgresSessionChanges here = start();
		await().atMost(WAIT).until(here::connected);
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		String listeners = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid = "
				+ ListeningInstances.SPACE + "::bigint::oid";
		List<Integer> listening = jdbc.sql(listeners).query(Integer.class).list();
		assertThat(listening).hasSize(1);

		here.close();
		// the same backend, idle in the pool: aborted under the listener, the connection was logged by the
		// pool as broken, with a stack trace, at every shutdown
		assertThat(jdbc.sql("SELECT application_name FROM pg_stat_activity WHERE pid = :pid")
			.param("pid", listening.get(0))
			.query(String.class)
			.list()).singleElement().isNotEqualTo(PostgresSessionChanges.APPLICATION_NAME);
		assertThat(jdbc.sql(listeners).query(Integer.class).list()).isEmpty();
	}

	@Test
	void aLoneInstanceSendsNoNoticesUntilAnotherSaysHello() throws Exception {
		try (Channel channel = new Channel()) {
			PostgresSessionChanges here = start();
			await().atMost(WAIT).until(here::connected);
			here.publish(SessionChange.Kind.WORK, "chat", "nobody-else-listens");
			PostgresSessionChanges there = start();
			listen(there);
			awaitConnected(here, there);
			here.publish(SessionChange.Kind.WORK, "chat", "another-listens");
			// one thread sends the notices, in order: the first would have come first
			assertThat(channel.nextChange("nobody-else-listens", "another-listens")).endsWith("/chat/another-listens");
			await().atMost(WAIT).until(() -> this.heard.contains(
					new SessionChange(SessionChange.Kind.WORK, "chat", "another-listens", false)));
		}
	}

	@Test
	void anInstanceLeftAloneStopsSendingNotices() throws Exception {
		try (Channel channel = new Channel()) {
			PostgresSessionChanges here = start(Duration.ofMillis(100));
			PostgresSessionChanges there = start();
			awaitConnected(here, there);
			assertThat(here.othersListen()).isTrue();
			there.close();
			await().atMost(WAIT).until(() -> !here.othersListen());
			here.publish(SessionChange.Kind.CLEARED, "chat", "left-alone");
			PostgresSessionChanges third = start();
			awaitConnected(here, third);
			here.publish(SessionChange.Kind.CLEARED, "chat", "joined-again");
			assertThat(channel.nextChange("left-alone", "joined-again")).endsWith("/chat/joined-again");
		}
	}

	@Test
	void aNewcomerIsConnectedOnlyOnceEveryInstanceListeningBeforeItHasAnswered() throws Exception {
		try (Channel peer = new Channel()) {
			int peerId = 42;
			int space = peer.lockAsListener(peerId);
			PostgresSessionChanges newcomer = start();
			String hello = peer.next((notice) -> notice.startsWith("h/" + space + "/"));
			// the peer has not answered: the newcomer's readers keep polling
			assertThat(newcomer.connected()).isFalse();
			assertThat(newcomer.othersListen()).isTrue();
			peer.say("a/" + space + "/" + peerId + "/" + hello.substring(hello.lastIndexOf('/') + 1));
			await().atMost(WAIT).until(newcomer::connected);
		}
	}

	@Test
	void aNewcomerDoesNotWaitForAnInstanceThatStoppedListeningWithoutAnswering() throws Exception {
		Channel peer = new Channel();
		try {
			int space = peer.lockAsListener(7);
			PostgresSessionChanges newcomer = start();
			peer.next((notice) -> notice.startsWith("h/" + space + "/"));
			assertThat(newcomer.connected()).isFalse();
			peer.close();
			await().atMost(WAIT).until(newcomer::connected);
			assertThat(newcomer.othersListen()).isFalse();
		}
		finally {
			peer.close();
		}
	}

	@Test
	void aHelloFromAnotherSchemaIsNotAnswered() throws Exception {
		try (Channel peer = new Channel()) {
			PostgresSessionChanges here = start();
			await().atMost(WAIT).until(here::connected);
			int space = peer.space();
			peer.say("h/1/98");
			peer.say("h/" + space + "/99");
			// answered in order: an answer to the first hello would come first
			assertThat(peer.next((notice) -> notice.startsWith("a/" + space + "/"))).endsWith("/99");
			assertThat(here.othersListen()).isTrue();
		}
	}

	@Test
	void eventsAreToldOnlyToTheInstancesThatFollowTheSession() throws Exception {
		try (Channel channel = new Channel()) {
			PostgresSessionChanges here = start();
			PostgresSessionChanges there = start();
			listen(there);
			awaitConnected(here, there);
			here.publish(SessionChange.Kind.EVENTS, "chat", "followed-nowhere");
			here.publish(SessionChange.Kind.PRESENCE, "chat", "followed-nowhere");
			try (AutoCloseable following = there.follow("chat", "followed")) {
				// the first instance learns of the follow and tells it the session changed, for what it missed
				await().atMost(WAIT).until(() -> this.heard.contains(
						new SessionChange(SessionChange.Kind.EVENTS, "chat", "followed", false)));
				this.heard.clear();
				here.publish(SessionChange.Kind.PRESENCE, "chat", "followed");
				await().atMost(WAIT).until(() -> this.heard.contains(
						new SessionChange(SessionChange.Kind.PRESENCE, "chat", "followed", false)));
			}
			// one thread sends the first instance's notices, in order: the first would have come first
			assertThat(channel.nextChange("followed-nowhere", "followed")).endsWith("/chat/followed");
			// work is told everywhere
			here.publish(SessionChange.Kind.WORK, "chat", "followed-nowhere");
			await().atMost(WAIT).until(() -> this.heard.contains(
					new SessionChange(SessionChange.Kind.WORK, "chat", "followed-nowhere", false)));
		}
	}

	@Test
	void aSessionNoLongerFollowedIsNoLongerTold() throws Exception {
		try (Channel channel = new Channel()) {
			PostgresSessionChanges here = start();
			PostgresSessionChanges there = start();
			listen(there);
			awaitConnected(here, there);
			AutoCloseable twice = there.follow("chat", "dropped");
			try (AutoCloseable once = there.follow("chat", "dropped")) {
				awaitTold("dropped");
			}
			// follows add up: one is left, and a follow made after the end of the other is learnt after it
			try (AutoCloseable marker = there.follow("chat", "marker")) {
				awaitTold("marker");
			}
			here.publish(SessionChange.Kind.EVENTS, "chat", "dropped");
			await().atMost(WAIT).until(() -> this.heard.stream()
				.filter((change) -> change.equals(new SessionChange(SessionChange.Kind.EVENTS, "chat", "dropped", false)))
				.count() == 2);
			twice.close();
			twice.close();
			try (AutoCloseable later = there.follow("chat", "later")) {
				awaitTold("later");
				assertThat(channel.nextChange("later")).startsWith("e/");
				assertThat(channel.nextChange("later")).startsWith("p/");
				here.publish(SessionChange.Kind.EVENTS, "chat", "dropped");
				here.publish(SessionChange.Kind.EVENTS, "chat", "later");
				assertThat(channel.nextChange("dropped", "later")).endsWith("/chat/later");
			}
		}
	}

	@Test
	void aNewcomerLearnsTheFollowsMadeBeforeItStarted() throws Exception {
		PostgresSessionChanges here = start();
		listen(here);
		await().atMost(WAIT).until(here::connected);
		try (AutoCloseable following = here.follow("chat", "followed-before")) {
			PostgresSessionChanges newcomer = start();
			await().atMost(WAIT).until(newcomer::connected);
			// told once the newcomer learnt of the follow, and for this change: never without the follow
			newcomer.publish(SessionChange.Kind.EVENTS, "chat", "followed-before");
			await().atMost(WAIT).until(() -> this.heard.contains(
					new SessionChange(SessionChange.Kind.EVENTS, "chat", "followed-before", false)));
			assertThat(newcomer.followedElsewhere("chat", "followed-before")).isTrue();
			assertThat(newcomer.followedElsewhere("chat", "followed-nowhere")).isFalse();
		}
	}

	@Test
	void theFollowsOfAnInstanceThatStoppedListeningAreDropped() throws Exception {
		try (Channel channel = new Channel()) {
			PostgresSessionChanges here = start(Duration.ofMillis(100));
			PostgresSessionChanges there = start();
			awaitConnected(here, there);
			// a listener that stays: the first instance is not left alone, and keeps telling what is followed
			channel.lockAsListener(7);
			there.follow("chat", "follower-gone");
			await().atMost(WAIT).until(() -> here.followedElsewhere("chat", "follower-gone"));
			// the notices that told the follower the session changed, its events and its presence
			assertThat(channel.nextChange("follower-gone")).startsWith("e/");
			assertThat(channel.nextChange("follower-gone")).startsWith("p/");
			there.close();
			await().atMost(WAIT).until(() -> !here.followedElsewhere("chat", "follower-gone"));
			here.publish(SessionChange.Kind.EVENTS, "chat", "follower-gone");
			here.publish(SessionChange.Kind.WORK, "chat", "marker");
			assertThat(channel.nextChange("follower-gone", "marker")).endsWith("/chat/marker");
		}
	}

	private void awaitTold(String session) {
		await().atMost(WAIT).until(() -> this.heard.stream().anyMatch((change) -> change.session().equals(session)));
	}

	private PostgresSessionChanges start() {
		return start(Duration.ofSeconds(10));
	}

	private PostgresSessionChanges start(Duration checkEvery) {
		PostgresSessionChanges changes = new PostgresSessionChanges(this.dataSource, checkEvery);
		this.started.add(changes);
		return changes;
	}

	private void listen(PostgresSessionChanges changes) {
		changes.listen((change) -> {
			if (change == null) {
				this.resyncs.incrementAndGet();
			}
			else if (!change.local()) {
				this.heard.add(change);
			}
		});
	}

	private static void awaitConnected(PostgresSessionChanges... instances) {
		await().atMost(WAIT).until(() -> List.of(instances).stream().allMatch(PostgresSessionChanges::connected));
	}

	/** A plain connection on the channel: what any instance would hear, or say. */
	private final class Channel implements AutoCloseable {

		private final Connection connection;

		private final List<String> received = new ArrayList<>();

		Channel() throws SQLException {
			this.connection = PostgresSessionChangesIntegrationTests.this.dataSource.getConnection();
			try (Statement statement = this.connection.createStatement()) {
				statement.execute("LISTEN " + PostgresSessionChanges.CHANNEL);
			}
		}

		int space() throws SQLException {
			try (Statement statement = this.connection.createStatement();
					ResultSet rs = statement.executeQuery("SELECT " + ListeningInstances.SPACE)) {
				rs.next();
				return rs.getInt(1);
			}
		}

		/** Holds the lock an instance that listens holds, as an instance that never answers would. */
		int lockAsListener(int id) throws SQLException {
			int space = space();
			try (PreparedStatement lock = this.connection.prepareStatement("SELECT pg_advisory_lock(?, ?)")) {
				lock.setInt(1, space);
				lock.setInt(2, id);
				lock.execute();
			}
			return space;
		}

		void say(String notice) throws SQLException {
			try (PreparedStatement statement = this.connection.prepareStatement("SELECT pg_notify(?, ?)")) {
				statement.setString(1, PostgresSessionChanges.CHANNEL);
				statement.setString(2, notice);
				statement.execute();
			}
		}

		/** The next notice of a change (not a hello, an answer or a follow) of one of these sessions of contract {@code chat}. */
		String nextChange(String... sessions) throws SQLException {
			return next((notice) -> "ewcp".indexOf(notice.charAt(0)) >= 0
					&& List.of(sessions).stream().anyMatch((session) -> notice.endsWith("/chat/" + session)));
		}

		String next(java.util.function.Predicate<String> wanted) throws SQLException {
			long deadline = System.nanoTime() + WAIT.toNanos();
			while (System.nanoTime() < deadline) {
				while (!this.received.isEmpty()) {
					String notice = this.received.remove(0);
					if (wanted.test(notice)) {
						return notice;
					}
				}
				PGNotification[] notifications = this.connection.unwrap(PGConnection.class).getNotifications(100);
				if (notifications != null) {
					for (PGNotification notification : notifications) {
						this.received.add(notification.getParameter());
					}
				}
			}
			throw new AssertionError("no such notice within " + WAIT + "; heard " + this.received);
		}

		@Override
		public void close() throws SQLException {
			if (!this.connection.isClosed()) {
				try (Statement statement = this.connection.createStatement()) {
					statement.execute("UNLISTEN *; SELECT pg_advisory_unlock_all()");
				}
				this.connection.close();
			}
		}

	}

}
