package dev.a2.web;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;

import dev.a2.live.SessionFeeds;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.blockhound.BlockingOperationError;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static dev.a2.web.WebCalls.client;
import static dev.a2.web.WebCalls.indexes;
import static dev.a2.web.WebCalls.push;
import static dev.a2.web.WebCalls.stream;
import static org.awaitility.Awaitility.await;

/**
 * The SSE stream on real servers: two instances of the application on one database, writers on
 * both, and subscribers that disconnect, resume, or stop reading.
 */
class LiveStreamIntegrationTests {

	private static Instances instances;

	private static ConfigurableApplicationContext a;

	private static ConfigurableApplicationContext b;

	private static WebClient clientA;

	private static WebClient clientB;

	@BeforeAll
	static void start() {
		instances = new Instances("live_streams");
		a = instances.start(ChatApplication.class);
		b = instances.start(ChatApplication.class);
		clientA = client(a);
		clientB = client(b);
	}

	@AfterAll
	static void stop() {
		instances.close();
	}

	@Test
	void eventsPushedToBothInstancesReachAStreamOnOneInOrderWithoutGapsOrRepeats() throws Exception {
		int writers = 4;
		int perWriter = 500;
		List<Long> received = new CopyOnWriteArrayList<>();
		Disposable stream = stream(clientB, "busy", null).subscribe((event) -> received.addAll(indexes(event)));
		ExecutorService pool = Executors.newFixedThreadPool(writers);
		try {
			List<Future<?>> pushing = new ArrayList<>();
			for (int w = 0; w < writers; w++) {
				WebClient client = (w % 2 == 0) ? clientA : clientB;
				int writer = w;
				pushing.add(pool.submit(() -> {
					for (int i = 0; i < perWriter; i++) {
						push(client, "busy", "w" + writer + "-" + i);
					}
				}));
			}
			for (Future<?> push : pushing) {
				push.get();
			}
			int total = writers * perWriter;
			await().atMost(Duration.ofSeconds(60)).until(() -> received.size() >= total);
			assertThat(received).containsExactlyElementsOf(LongStream.rangeClosed(1, total).boxed().toList());
		}
		finally {
			stream.dispose();
			pool.shutdownNow();
		}
	}

	@Test
	void aStreamResumedWithLastEventIdGetsExactlyTheEventsItMissed() {
		for (int i = 1; i <= 10; i++) {
			push(clientA, "resume", "m" + i);
		}
		List<ServerSentEvent<String>> first = new ArrayList<>();
		List<Long> seen = new ArrayList<>();
		stream(clientB, "resume", null).takeUntil((event) -> {
			first.add(event);
			seen.addAll(indexes(event));
			return seen.contains(10L);
		}).blockLast(Duration.ofSeconds(20));
		String lastEventId = first.get(first.size() - 1).id();
		assertThat(lastEventId).isEqualTo("10");

		for (int i = 11; i <= 15; i++) {
			push(clientA, "resume", "m" + i);
		}
		List<Long> resumed = new ArrayList<>();
		stream(clientB, "resume", lastEventId).takeUntil((event) -> {
			resumed.addAll(indexes(event));
			return resumed.contains(15L);
		}).blockLast(Duration.ofSeconds(20));
		assertThat(resumed).containsExactly(11L, 12L, 13L, 14L, 15L);
	}

	@Test
	void aSubscriberThatStopsReadingIsNotBufferedForAndCatchesUpFromTheStore() throws Exception {
		SessionFeeds feeds = b.getBean(SessionFeeds.class);
		List<Long> received = new CopyOnWriteArrayList<>();
		BaseSubscriber<ServerSentEvent<String>> slow = new BaseSubscriber<>() {
			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				request(1);
			}

			@Override
			protected void hookOnNext(ServerSentEvent<String> event) {
				received.addAll(indexes(event));
			}
		};
		stream(clientB, "slow", null).subscribe(slow);
		String big = "x".repeat(4000);
		int total = 4000;
		AtomicLong mostBuffered = new AtomicLong();
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> pushing = new ArrayList<>();
			for (int w = 0; w < 4; w++) {
				int writer = w;
				pushing.add(pool.submit(() -> {
					for (int i = 0; i < total / 4; i++) {
						push(clientA, "slow", big + writer + "-" + i);
						mostBuffered.accumulateAndGet(feeds.bufferedEvents(), Math::max);
					}
				}));
			}
			for (Future<?> push : pushing) {
				push.get();
			}
			// 16 MB were appended while the subscriber read nothing: the server held at most one chunk
			assertThat(received).hasSizeLessThan(total);
			assertThat(mostBuffered.get()).isLessThanOrEqualTo(SessionFeeds.CHUNK);
			assertThat(feeds.bufferedEvents()).isLessThanOrEqualTo(SessionFeeds.CHUNK);

			slow.request(Long.MAX_VALUE);
			await().atMost(Duration.ofSeconds(60)).until(() -> received.size() >= total);
			assertThat(received).containsExactlyElementsOf(LongStream.rangeClosed(1, total).boxed().toList());
		}
		finally {
			slow.dispose();
			pool.shutdownNow();
		}
	}

	@Test
	void blockHoundIsWatchingTheEventLoops() {
		// the proof that the tests above ran with blocking calls on the servers' event loops refused;
		// the loops are the ones this server was given, not whatever the global resources hold now
		EventLoop loop = a.getBean(ReactorResourceFactory.class).getLoopResources().onServer(true).next();
		Future<Integer> blocking = loop.submit(() -> {
			Object lock = new Object();
			synchronized (lock) {
				lock.wait(1);
			}
			return 1;
		});
		assertThatThrownBy(() -> blocking.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(BlockingOperationError.class);
	}

}
