package dev.a2;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.LongStream;

import dev.a2.TestContracts.Note;
import dev.a2.live.FeedItem;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.PresenceUpdate;
import dev.a2.live.SessionChanges;
import dev.a2.live.SessionFeeds;
import dev.a2.store.postgres.PostgresSessionChanges;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import static dev.a2.TestContracts.message;
import static dev.a2.TestContracts.note;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Instances tell each other which sessions changed (LISTEN/NOTIFY): new work appended through one is
 * drained by another at once, an abortOn event aborts a run on another at once, and the events a run
 * returns reach the feeds of every instance and abort what they name — none of it waiting for a sweep,
 * a heartbeat or a poll.
 */
class SessionChangesIntegrationTests {

	/** Nothing here sweeps, and heartbeats come every 20 s: whatever happens sooner was told. */
	private static final Duration SOONER = Duration.ofSeconds(10);

	private final DrainTestSupport support = new DrainTestSupport("session_changes");

	private final List<AutoCloseable> closing = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.closing) {
			closeable.close();
		}
		this.support.close();
	}

	@Test
	void workAppendedThroughAnotherInstanceIsDrainedAtOnce() {
		List<Long> ran = new CopyOnWriteArrayList<>();
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent").run((context) -> {
			ran.add(context.event().index());
			return null;
		});
		server(true, echo);
		A2Server appending = server(false, echo);
		Session session = appending.session("chat", A2TestSupport.newSessionId());
		session.append(message("one"), message("two"));
		await().atMost(SOONER).until(() -> ran.size() == 2);
		assertThat(ran).containsExactlyInAnyOrder(1L, 2L);
	}

	@Test
	void anAbortOnEventAppendedThroughAnotherInstanceAbortsAtOnce() throws Exception {
		BlockedReplier replier = new BlockedReplier();
		A2Server running = server(true, replier.consumer);
		A2Server elsewhere = server(false, replier.consumer);
		Session session = running.session("chat", A2TestSupport.newSessionId());
		session.append(message("question"));
		assertThat(replier.started()).isTrue();
		elsewhere.session("chat", session.id()).append(note("stop"));
		await().atMost(SOONER).until(() -> replier.reason() != null);
		assertThat(replier.reason().code()).isEqualTo(ErrorCode.ABORTED);
	}

	@Test
	void anAbortOnEventARunReturnsAbortsAnotherRunAtOnce() {
		BlockedReplier replier = new BlockedReplier();
		Consumer stopper = Consumer.builder("chat", "stopper").types("message.sent").run((context) -> {
			assertThat(replier.started()).isTrue();
			return note("stop");
		});
		A2Server server = server(true, replier.consumer, stopper);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("question"));
		await().atMost(SOONER).until(() -> replier.reason() != null);
		assertThat(replier.reason().code()).isEqualTo(ErrorCode.ABORTED);
		assertThat(session.history(0, 10).events()).extracting(Event::type).containsExactly("message.sent", "note");
	}

	@Test
	void eventsARunReturnsReachTheFeedsOfAnotherInstance() {
		Consumer echo = Consumer.builder("chat", "echo").types("message.sent")
			.run((context) -> note("echo of " + context.event().index()));
		A2Server running = server(true, echo);
		A2Server watching = server(false, echo);
		Scheduler scheduler = Schedulers.newBoundedElastic(4, 100, "feeds");
		this.closing.add(scheduler::dispose);
		// a poll of an hour: only a told change can wake this feed
		SessionFeeds feeds = new SessionFeeds(watching.eventStore(), watching.changes(), scheduler, Duration.ofHours(1));
		this.closing.add(feeds);
		Session session = running.session("chat", A2TestSupport.newSessionId());
		List<String> types = new CopyOnWriteArrayList<>();
		Disposable feed = feeds.events("chat", session.id(), 0).subscribe((item) -> {
			if (item instanceof FeedItem.Events events) {
				events.events().forEach((event) -> types.add(event.type()));
			}
		});
		this.closing.add(feed::dispose);
		await().atMost(SOONER).until(() -> feeds.sessions() == 1);
		session.append(message("hello"));
		await().atMost(SOONER).until(() -> types.size() == 2);
		assertThat(types).containsExactly("message.sent", "note");
		assertThat(watching.session("chat", session.id()).history(0, 10).events().get(1).payload(Note.class).text())
			.isEqualTo("echo of 1");
	}

	@Test
	void presenceWrittenThroughAnotherInstanceReachesAPresenceFeedAtOnce() {
		A2Server writing = server(false);
		A2Server watching = server(false);
		Scheduler scheduler = Schedulers.newBoundedElastic(4, 100, "presence");
		this.closing.add(scheduler::dispose);
		// a check of an hour: only a told change can wake this feed
		PresenceFeeds feeds = new PresenceFeeds(watching.changes(),
				(contract, id) -> watching.session(contract, id).presence(), scheduler, Duration.ofHours(1),
				Clock.systemUTC());
		this.closing.add(feeds);
		String id = A2TestSupport.newSessionId();
		List<PresenceUpdate> updates = new CopyOnWriteArrayList<>();
		Disposable feed = feeds.presence("chat", id).subscribe(updates::add);
		this.closing.add(feed::dispose);
		await().atMost(SOONER).until(() -> !updates.isEmpty());
		writing.session("chat", id).presence(PresenceWrite.of("ann", Map.of("typing", true)));
		await().atMost(SOONER).until(() -> updates.size() == 2);
		assertThat(updates.get(1)).isInstanceOfSatisfying(PresenceUpdate.Patches.class,
				(patches) -> assertThat(patches.patches()).extracting(PresencePatch::participant).containsExactly("ann"));
	}

	@Test
	void subscribersOfABusySessionGetEveryEventWithoutAPoll() throws Exception {
		A2Server server = server(false);
		Scheduler scheduler = Schedulers.newBoundedElastic(16, 1000, "feeds");
		this.closing.add(scheduler::dispose);
		// a poll of an hour: a change whose wake-up is lost is never read
		SessionFeeds feeds = new SessionFeeds(server.eventStore(), server.changes(), scheduler, Duration.ofHours(1));
		this.closing.add(feeds);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		List<List<Long>> received = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			List<Long> indexes = new CopyOnWriteArrayList<>();
			received.add(indexes);
			Disposable feed = feeds.events("chat", session.id(), 0).subscribe((item) -> {
				if (item instanceof FeedItem.Events events) {
					events.events().forEach((event) -> indexes.add(event.index()));
				}
			});
			this.closing.add(feed::dispose);
		}
		await().atMost(SOONER).until(() -> feeds.sessions() == 1);
		// bursts of appends at once, each burst read before the next: a lost wake-up leaves the
		// subscribers short of the burst for good
		ExecutorService writers = Executors.newFixedThreadPool(4);
		this.closing.add(writers::shutdownNow);
		for (int burst = 1; burst <= 40; burst++) {
			CountDownLatch go = new CountDownLatch(1);
			List<Future<?>> appends = new ArrayList<>();
			for (int w = 0; w < 4; w++) {
				appends.add(writers.submit(() -> {
					go.await();
					return session.append(message("burst"));
				}));
			}
			go.countDown();
			for (Future<?> append : appends) {
				append.get();
			}
			List<Long> all = LongStream.rangeClosed(1, burst * 4L).boxed().toList();
			await().atMost(SOONER).untilAsserted(() -> assertThat(received)
				.allSatisfy((indexes) -> assertThat(indexes).containsExactlyElementsOf(all)));
		}
	}

	private A2Server server(boolean runConsumers, Consumer... consumers) {
		SessionChanges changes = new PostgresSessionChanges(this.support.dataSource);
		this.closing.add(0, changes);
		await().atMost(SOONER).until(changes::connected);
		A2Server.Builder builder = A2TestSupport.server(this.support.dataSource)
			.drain(DrainSettings.DEFAULTS.withLease(Duration.ofMinutes(1)))
			.runConsumers(runConsumers)
			.sessionChanges(changes);
		for (Consumer consumer : consumers) {
			builder.consumer(consumer);
		}
		A2Server server = builder.build();
		this.closing.add(0, server::halt);
		return server;
	}

}
