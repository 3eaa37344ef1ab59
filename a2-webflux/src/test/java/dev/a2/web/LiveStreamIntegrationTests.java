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
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
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

	private static final JsonMapper json = JsonMapper.builder().build();

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
	void stateFramesNeverGoBackWhenTheHistoryComesInSeveralFrames() {
		// 600 events: more than one frame (500) of history
		for (int push = 0; push < 6; push++) {
			StringBuilder body = new StringBuilder("{\"events\":[");
			for (int i = 1; i <= 100; i++) {
				body.append((i > 1) ? "," : "").append("{\"type\":\"message.sent\",\"payload\":{\"text\":\"m")
					.append(push * 100 + i).append("\",\"author\":\"ann\"}}");
			}
			clientA.post().uri("/a2/chat/sessions/state-sync/events").contentType(MediaType.APPLICATION_JSON)
				.bodyValue(body.append("]}").toString()).retrieve().toBodilessEntity().block(Duration.ofSeconds(30));
		}
		List<String> frames = new ArrayList<>();
		List<Long> states = new ArrayList<>();
		stateStream(clientB, "state-sync", 0).takeUntil((event) -> {
			frames.add(describe(event));
			if ("state".equals(event.event())) {
				states.add(json.readTree(event.data()).get("index").asLong());
			}
			return states.contains(600L);
		}).blockLast(Duration.ofSeconds(30));
		// the state where the stream starts, then the state after each events frame
		assertThat(states).as("the state frames among %s", frames).isSorted().startsWith(0L).endsWith(600L).hasSizeGreaterThan(2);
		assertThat(frames.get(1)).as("%s", frames).startsWith("events");
	}

	@Test
	void aStreamFromBeforeAClearIsNotHandedTheStateOfWhatTheClearRemoved() {
		push(clientA, "state-cleared", "gone");
		push(clientA, "state-cleared", "gone too");
		clientA.delete().uri("/a2/chat/sessions/state-cleared").retrieve().toBodilessEntity().block(Duration.ofSeconds(30));
		push(clientA, "state-cleared", "kept");
		List<String> frames = new ArrayList<>();
		List<JsonNode> states = new ArrayList<>();
		// through the state after the events frame of "kept"
		stateStream(clientB, "state-cleared", 1).takeUntil((event) -> {
			frames.add(describe(event));
			if (!"state".equals(event.event())) {
				return false;
			}
			states.add(json.readTree(event.data()));
			return frames.contains("events(id 4)");
		}).blockLast(Duration.ofSeconds(30));
		assertThat(states).as("%s", frames).extracting((state) -> state.get("state").get("last").asString())
			.doesNotContain("gone", "gone too");
		assertThat(states).as("%s", frames).extracting((state) -> state.get("index").asLong()).isSorted().endsWith(4L);
		assertThat(states.get(states.size() - 1).get("state").get("messages").asInt()).isEqualTo(1);
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

	private static Flux<ServerSentEvent<String>> stateStream(WebClient client, String session, long after) {
		return client.get()
			.uri("/a2/chat/sessions/{session}/stream?after={after}&state=summary", session, after)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.retrieve()
			.bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			})
			.filter((event) -> "state".equals(event.event()) || "events".equals(event.event()) || "cleared".equals(event.event()));
	}

	private static String describe(ServerSentEvent<String> event) {
		return "state".equals(event.event()) ? "state@" + json.readTree(event.data()).get("index").asLong()
				: event.event() + "(id " + event.id() + ")";
	}

}
