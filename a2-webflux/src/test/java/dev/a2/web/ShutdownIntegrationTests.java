package dev.a2.web;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.socket.CloseStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Stopping an instance ends its live connections before the web server's graceful shutdown waits
 * for active requests: a stream is never done by itself, so the shutdown would otherwise wait out
 * its whole timeout (ten minutes here) and then cut the clients off.
 */
class ShutdownIntegrationTests {

	private final Instances instances = new Instances("shutdown");

	@AfterEach
	void close() {
		this.instances.close();
	}

	@Test
	void stoppingEndsStreamsAndClosesSocketsAsGoingAway() {
		ConfigurableApplicationContext app = this.instances.start(ChatApplication.class,
				"spring.lifecycle.timeout-per-shutdown-phase=10m");
		WebClient http = WebCalls.client(app);
		WebCalls.push(http, "leaving", "hello");
		List<Long> seen = new CopyOnWriteArrayList<>();
		AtomicBoolean streamCompleted = new AtomicBoolean();
		Disposable stream = WebCalls.stream(http, "leaving", null)
			.subscribe((event) -> seen.addAll(WebCalls.indexes(event)), (ex) -> {
			}, () -> streamCompleted.set(true));
		try (TestSocket socket = new TestSocket(Instances.port(app), "chat")) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"leaving\"}");
			socket.awaitFrame(TestSocket.type("subscribed", "leaving"));
			await().atMost(Duration.ofSeconds(20)).until(() -> seen.contains(1L));

			Thread stopping = new Thread(app::close, "stopping");
			stopping.setDaemon(true);
			stopping.start();

			await().atMost(Duration.ofSeconds(30)).untilTrue(streamCompleted);
			await().atMost(Duration.ofSeconds(30)).until(() -> socket.closeStatus.get() != null);
			assertThat(socket.closeStatus.get().getCode()).isEqualTo(CloseStatus.GOING_AWAY.getCode());
			await().atMost(Duration.ofSeconds(30)).until(() -> !stopping.isAlive());
			assertThat(seen).containsExactly(1L);
		}
		finally {
			stream.dispose();
		}
	}

}
