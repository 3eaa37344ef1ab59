package dev.a2;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import javax.sql.DataSource;

import dev.a2.TestContracts.Cursor;
import dev.a2.TestContracts.MessageSent;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.SessionChange;
import dev.a2.live.SessionChanges;
import dev.a2.live.PresenceUpdate;
import dev.a2.test.MutableClock;
import dev.a2.test.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Presence (§9) on a real PostgreSQL: last writer wins per field, tombstones, expiry, pushes. */
@ExtendWith(PostgresExtension.class)
class PresenceIntegrationTests {

	private static final Instant T0 = Instant.parse("2026-01-01T12:00:00Z");

	private final DataSource dataSource;

	private final MutableClock clock = new MutableClock(T0);

	private final A2Server server;

	private final Session session;

	PresenceIntegrationTests(DataSource dataSource) {
		this.dataSource = dataSource;
		this.server = A2TestSupport.server(dataSource).clock(this.clock).presenceTtl(Duration.ofSeconds(60)).build();
		this.session = this.server.session("chat", A2TestSupport.newSessionId());
	}

	@Test
	void aWriteIsReadBackBoundToTheFieldsTypes() {
		List<PresencePatch> patches = this.session.presence(PresenceWrite.of("ann",
				values("typing", true, "cursor", Map.of("line", 3, "column", 7))));
		assertThat(patches).extracting(PresencePatch::field).containsExactlyInAnyOrder("typing", "cursor");
		PresenceSnapshot snapshot = this.session.presence();
		assertThat(snapshot.participants()).containsOnlyKeys("ann");
		assertThat(snapshot.participants().get("ann").get("typing")).isEqualTo(new PresenceValue(true, T0));
		assertThat(snapshot.participants().get("ann").get("cursor").value()).isEqualTo(new Cursor(3, 7));
	}

	@Test
	void theLatestTimestampWinsWhateverOrderWritesArriveIn() {
		this.session.presence(new PresenceWrite("ann", values("typing", true), T0.minusSeconds(5)));
		List<PresencePatch> late = this.session.presence(new PresenceWrite("ann", values("typing", false), T0.minusSeconds(10)));
		assertThat(late).isEmpty();
		assertThat(this.session.presence().participants().get("ann").get("typing").value()).isEqualTo(true);
		this.session.presence(new PresenceWrite("ann", values("typing", false), T0.minusSeconds(1)));
		assertThat(this.session.presence().participants().get("ann").get("typing").value()).isEqualTo(false);
	}

	@Test
	void aRemovedFieldLeavesATombstoneThatAnOlderWriteCannotPassThrough() {
		this.session.presence(new PresenceWrite("ann", values("typing", true), T0.minusSeconds(10)));
		this.session.presence(new PresenceWrite("ann", values("typing", null), T0.minusSeconds(5)));
		assertThat(this.session.presence().participants()).isEmpty();
		assertThat(this.session.presence(new PresenceWrite("ann", values("typing", true), T0.minusSeconds(8)))).isEmpty();
		assertThat(this.session.presence().participants()).isEmpty();
	}

	@Test
	void aTombstoneOutlivesTheTtlSoALateOlderWriteCannotBringTheFieldBack() {
		this.session.presence(new PresenceWrite("ann", values("typing", true), T0.minusSeconds(10)));
		this.session.presence(new PresenceWrite("ann", values("typing", null), T0.minusSeconds(5)));
		this.clock.advance(Duration.ofSeconds(61));
		// a retried request from before the removal arrives after the TTL
		assertThat(this.session.presence(new PresenceWrite("ann", values("typing", true), T0.minusSeconds(8)))).isEmpty();
		assertThat(this.session.presence().participants()).isEmpty();
		// a write after the removal still applies
		this.session.presence(PresenceWrite.of("ann", values("typing", true)));
		assertThat(this.session.presence().participants().get("ann").get("typing").value()).isEqualTo(true);
	}

	@Test
	void aNewSubscribersSnapshotLeavesOutWhatExpiredSinceTheFeedLastRead() {
		Scheduler scheduler = Schedulers.newBoundedElastic(2, 100, "presence-test");
		// a check of an hour: the feed reads again only when told, and expiry is told to no one
		try (PresenceFeeds feeds = new PresenceFeeds(this.server.changes(), (contract, id) -> this.session.presence(), scheduler,
				Duration.ofHours(1), this.clock)) {
			List<PresenceUpdate> first = new CopyOnWriteArrayList<>();
			Disposable open = feeds.presence("chat", this.session.id()).subscribe(first::add);
			try {
				await().atMost(Duration.ofSeconds(10)).until(() -> !first.isEmpty());
				this.session.presence(PresenceWrite.of("ann", values("typing", true)));
				await().atMost(Duration.ofSeconds(10)).until(() -> first.size() == 2);
				this.clock.advance(Duration.ofSeconds(61));

				PresenceUpdate snapshot = feeds.presence("chat", this.session.id()).blockFirst(Duration.ofSeconds(10));

				assertThat(snapshot).isInstanceOfSatisfying(PresenceUpdate.Snapshot.class,
						(update) -> assertThat(update.snapshot().participants()).as("ann expired a second ago").isEmpty());
			}
			finally {
				open.dispose();
			}
		}
		finally {
			scheduler.dispose();
		}
	}

	@Test
	void aSubscriberIsToldOfAChangeThatANewcomersSnapshotReadBeforeTheChangesNoticeArrived() {
		Scheduler scheduler = Schedulers.newBoundedElastic(2, 100, "presence-test");
		// notices told by hand: carol's write reaches the feed only after a newcomer's snapshot has read it,
		// as when a page writes presence and opens its stream at once; checks every 50 ms
		SessionChanges changes = SessionChanges.local();
		try (PresenceFeeds feeds = new PresenceFeeds(changes, (contract, id) -> this.session.presence(), scheduler,
				Duration.ofMillis(50), this.clock)) {
			List<PresenceUpdate> watcher = new CopyOnWriteArrayList<>();
			Disposable open = feeds.presence("chat", this.session.id()).subscribe(watcher::add);
			try {
				await().atMost(Duration.ofSeconds(10)).until(() -> !watcher.isEmpty());
				this.session.presence(PresenceWrite.of("carol", values("typing", true)));
				PresenceUpdate newcomer = feeds.presence("chat", this.session.id()).blockFirst(Duration.ofSeconds(10));
				assertThat(newcomer).isInstanceOfSatisfying(PresenceUpdate.Snapshot.class,
						(update) -> assertThat(update.snapshot().participants()).containsOnlyKeys("carol"));

				changes.publish(SessionChange.Kind.PRESENCE, "chat", this.session.id());

				await().atMost(Duration.ofSeconds(10)).until(() -> watcher.size() == 2);
				assertThat(watcher.get(1)).isInstanceOfSatisfying(PresenceUpdate.Patches.class,
						(update) -> assertThat(update.patches()).singleElement()
							.satisfies((patch) -> assertThat(patch.participant()).isEqualTo("carol")));
			}
			finally {
				open.dispose();
			}
		}
		finally {
			scheduler.dispose();
		}
	}

	@Test
	void aTimestampInTheFutureIsTakenAsTheServersTime() {
		this.session.presence(new PresenceWrite("ann", values("typing", true), T0.plus(Duration.ofDays(365))));
		assertThat(this.session.presence().participants().get("ann").get("typing").at()).isEqualTo(T0);
		// a far-future write would otherwise win against every honest write that follows it
		this.clock.advance(Duration.ofSeconds(1));
		this.session.presence(PresenceWrite.of("ann", values("typing", false)));
		assertThat(this.session.presence().participants().get("ann").get("typing").value()).isEqualTo(false);
	}

	@Test
	void aTimestampBeforeTheEpochIsRefusedNamingAtAndStoresNothing() {
		// the earliest PostgreSQL cannot store; the very earliest overflowed java.sql.Timestamp into another time
		for (Instant at : List.of(Instant.EPOCH.minusMillis(1), Instant.parse("-100000-01-01T00:00:00Z"),
				Instant.ofEpochMilli(Long.MIN_VALUE), Instant.MIN)) {
			assertInvalid(new PresenceWrite("ann", values("typing", true), at), "at must be 1970-01-01T00:00:00Z or later");
			assertThatThrownBy(() -> this.session.append(List.of(NewEvent.of("message.sent", new MessageSent("hi", "ann"))),
					new PresenceWrite("ann", values("typing", false), at))).hasMessageContaining("presence.at must be");
		}
		assertThat(this.session.presence().participants()).isEmpty();
		assertThat(this.session.history(0, 10).events()).isEmpty();
		// the epoch itself is a time like any other; the farthest future is the server's time
		this.session.presence(new PresenceWrite("ann", values("typing", true), Instant.EPOCH));
		assertThat(this.session.presence().participants().get("ann").get("typing").at()).isEqualTo(Instant.EPOCH);
		this.session.presence(new PresenceWrite("ann", values("typing", false), Instant.MAX));
		assertThat(this.session.presence().participants().get("ann").get("typing")).isEqualTo(new PresenceValue(false, T0));
	}

	@Test
	void aParticipantsFieldsExpireTogetherUnlessItWritesAgain() {
		this.session.presence(PresenceWrite.of("ann", values("typing", true)));
		this.session.presence(PresenceWrite.of("bob", values("typing", true)));
		this.clock.advance(Duration.ofSeconds(40));
		this.session.presence(PresenceWrite.of("ann", values("cursor", Map.of("line", 1, "column", 1))));
		this.clock.advance(Duration.ofSeconds(30));
		// bob wrote 70 s ago: gone; ann refreshed both her fields 30 s ago
		assertThat(this.session.presence().participants()).containsOnlyKeys("ann");
		assertThat(this.session.presence().participants().get("ann")).containsOnlyKeys("typing", "cursor");
		this.clock.advance(Duration.ofSeconds(31));
		assertThat(this.session.presence().participants()).isEmpty();
		// an expired row counts as absent: an older timestamp may write it again
		this.session.presence(new PresenceWrite("bob", values("typing", false), T0));
		assertThat(this.session.presence().participants().get("bob").get("typing").value()).isEqualTo(false);
		this.server.sweep();
		assertThat(JdbcClient.create(this.dataSource).sql("SELECT count(*) FROM a2_presence WHERE session_id = ?")
			.param(this.session.id()).query(Long.class).single()).isEqualTo(1);
	}

	@Test
	void badWritesAreRefusedNamingWhatIsWrongAndStoreNothing() {
		assertInvalid(PresenceWrite.of("a2", values("typing", true)), "reserved");
		assertInvalid(PresenceWrite.of("a2.bot", values("typing", true)), "reserved");
		assertInvalid(PresenceWrite.of("", values("typing", true)), "participant must be 1-128");
		assertInvalid(PresenceWrite.of("x".repeat(129), values("typing", true)), "participant must be 1-128");
		assertInvalid(PresenceWrite.of("ann", Map.of()), "at least one field");
		assertInvalid(PresenceWrite.of("ann", values("mood", "happy")), "values.mood is not a presence field");
		assertInvalid(PresenceWrite.of("ann", values("cursor", Map.of("line", -1, "column", 0))), "values.cursor.line");
		assertInvalid(PresenceWrite.of("ann", values("typing", Map.of("no", "boolean"))), "values.typing");
		assertThat(this.session.presence().participants()).isEmpty();
	}

	@Test
	void aPushWithPresenceStoresBothOrNeither() {
		this.session.presence(PresenceWrite.of("ann", values("typing", true)));
		this.clock.advance(Duration.ofSeconds(1));
		this.session.append(List.of(NewEvent.of("message.sent", new MessageSent("hi", "ann"))),
				PresenceWrite.of("ann", values("typing", false)));
		assertThat(this.session.history(0, 10).events()).hasSize(1);
		assertThat(this.session.presence().participants().get("ann").get("typing").value()).isEqualTo(false);

		this.clock.advance(Duration.ofSeconds(1));
		assertThatThrownBy(() -> this.session.append(List.of(NewEvent.of("message.sent", new MessageSent("", "ann"))),
				PresenceWrite.of("ann", values("typing", true)))).isInstanceOf(A2Exception.class);
		assertThatThrownBy(() -> this.session.append(List.of(NewEvent.of("message.sent", new MessageSent("ok", "ann"))),
				PresenceWrite.of("ann", values("mood", true)))).hasMessageContaining("presence.values.mood");
		assertThat(this.session.history(0, 10).events()).hasSize(1);
		assertThat(this.session.presence().participants().get("ann").get("typing").value()).isEqualTo(false);
	}

	@Test
	void consumersReadPresenceAndAnotherInstanceSeesTheSame() {
		Map<String, PresenceSnapshot> seen = new java.util.concurrent.ConcurrentHashMap<>();
		Consumer reader = Consumer.builder("chat", "presence-reader").types("message.sent").run((context) -> {
			seen.put("run", context.session().presence());
			return null;
		});
		A2Server withConsumer = A2TestSupport.server(this.dataSource).clock(this.clock).consumer(reader).build();
		try {
			Session other = withConsumer.session("chat", this.session.id());
			this.session.presence(PresenceWrite.of("ann", values("typing", true)));
			assertThat(other.presence()).isEqualTo(this.session.presence());
			other.append(NewEvent.of("message.sent", new MessageSent("hi", "ann")));
			await().until(() -> seen.containsKey("run"));
			assertThat(seen.get("run").participants().get("ann").get("typing").value()).isEqualTo(true);
		}
		finally {
			withConsumer.close();
		}
	}

	/**
	 * A page writing its cursor every 50 ms over HTTP has several writes of one participant in flight:
	 * each refreshes the participant's rows, which PostgreSQL locked in whatever order its scan met them,
	 * so two writes could deadlock and one failed (500 INTERNAL, a stack trace in the log).
	 */
	@Test
	void manyWritesOfOneParticipantAtOnceNeverDeadlock() throws Exception {
		A2Server live = A2TestSupport.server(this.dataSource).presenceTtl(Duration.ofSeconds(60)).build();
		ExecutorService writers = Executors.newFixedThreadPool(16);
		try {
			Session room = live.session("chat", this.session.id());
			List<Future<?>> writes = new ArrayList<>();
			for (int i = 0; i < 2000; i++) {
				int n = i;
				// the cursor as it moves, a keystroke now and then, both as the keep-alive writes them
				Map<String, Object> written = switch (n % 3) {
					case 0 -> values("cursor", Map.of("line", n, "column", n));
					case 1 -> values("typing", n % 2 == 0);
					default -> values("typing", n % 2 == 0, "cursor", Map.of("line", n, "column", n));
				};
				writes.add(writers.submit(() -> room.presence(PresenceWrite.of("ann", written))));
			}
			List<Throwable> failed = new ArrayList<>();
			for (Future<?> write : writes) {
				try {
					write.get();
				}
				catch (ExecutionException ex) {
					failed.add(ex.getCause());
				}
			}
			assertThat(failed).isEmpty();
			assertThat(room.presence().participants().get("ann")).containsOnlyKeys("typing", "cursor");
		}
		finally {
			writers.shutdownNow();
			live.close();
		}
	}

	private void assertInvalid(PresenceWrite write, String message) {
		assertThatThrownBy(() -> this.session.presence(write)).isInstanceOfSatisfying(A2Exception.class,
				(ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.INVALID_PAYLOAD))
			.hasMessageContaining(message);
	}

	private static Map<String, Object> values(Object... pairs) {
		Map<String, Object> values = new HashMap<>();
		for (int i = 0; i < pairs.length; i += 2) {
			values.put((String) pairs[i], pairs[i + 1]);
		}
		return values;
	}

}
