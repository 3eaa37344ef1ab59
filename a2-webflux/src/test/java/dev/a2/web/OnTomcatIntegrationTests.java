package dev.a2.web;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.websocket.ContainerProvider;
import jakarta.websocket.WebSocketContainer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.tomcat.reactive.TomcatReactiveWebServerFactory;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.socket.client.StandardWebSocketClient;
import org.springframework.web.reactive.socket.client.WebSocketClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A2's endpoints in a WebFlux application on Tomcat, with no Reactor Netty on the classpath at all:
 * pushes, the SSE stream and the socket, whose frames are bounded by A2's limit, not by Tomcat's
 * 8 KB default. Failsafe runs these, the only tests with Tomcat and without Reactor Netty.
 */
class OnTomcatIntegrationTests {

	/** The push limit: frames up to twice it reach A2, which answers those over it with an error. */
	private static final int LIMIT = 64 * 1024;

	private static Instances instances;

	private static ConfigurableApplicationContext app;

	private static int port;

	private static WebClient http;

	@BeforeAll
	static void start() {
		instances = new Instances("on_tomcat");
		app = instances.start(new Class<?>[] { ChatApplication.class, TomcatServer.class },
				"a2.web.max-push-bytes=" + LIMIT + "B", "a2.web.ping=1s");
		port = Instances.port(app);
		http = WebCalls.client(app);
	}

	@AfterAll
	static void stop() {
		instances.close();
	}

	@Test
	void theApplicationRunsOnTomcat() {
		assertThat(((WebServerApplicationContext) app).getWebServer()).isInstanceOf(TomcatWebServer.class);
	}

	@Test
	void theStreamGivesHistoryThenWhatIsPushedLive() {
		WebCalls.push(http, "tomcat-stream", "before");
		List<Long> seen = new CopyOnWriteArrayList<>();
		Disposable stream = WebCalls.stream(http, "tomcat-stream", null)
			.subscribe((event) -> seen.addAll(WebCalls.indexes(event)));
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> seen.contains(1L));
			WebCalls.push(http, "tomcat-stream", "live");
			WebCalls.push(http, "tomcat-stream", "again");
			await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 3);
			assertThat(seen).containsExactly(1L, 2L, 3L);
		}
		finally {
			stream.dispose();
		}
	}

	@Test
	void theSocketTakesFramesUpToA2sLimitAndAnswersLargerOnesWithAnError() {
		try (TestSocket socket = new TestSocket(standardClient(), port, "chat")) {
			socket.send("{\"type\":\"subscribe\",\"session\":\"tomcat-socket\"}");
			socket.awaitFrame(TestSocket.type("subscribed", "tomcat-socket"));

			// over Tomcat's default buffer of 8 KB, within A2's limit
			String text = "t".repeat(LIMIT / 2);
			socket.send("{\"type\":\"push\",\"ref\":\"big\",\"session\":\"tomcat-socket\",\"events\":[{\"type\":"
					+ "\"message.sent\",\"payload\":{\"text\":\"" + text + "\",\"author\":\"ann\"}}]}");
			JsonNode ack = socket.awaitFrame(TestSocket.type("ack"));
			assertThat(ack.get("ref").asString()).isEqualTo("big");
			JsonNode events = socket.awaitFrame(TestSocket.type("events", "tomcat-socket"));
			assertThat(events.get("events").get(0).get("payload").get("text").asString()).isEqualTo(text);

			socket.send("{\"type\":\"ping\",\"pad\":\"" + "p".repeat(LIMIT + 10) + "\"}");
			JsonNode error = socket.awaitFrame(TestSocket.type("error"));
			assertThat(error.path("error").path("code").asString()).isEqualTo("PAYLOAD_TOO_LARGE");
			socket.send("{\"type\":\"ping\"}");
			socket.awaitFrame(TestSocket.type("pong"));
		}
	}

	/**
	 * Many streams whose clients leave at once, each failing its next write (a ping every second), leave
	 * every other connection answered: on Tomcat a failed write could close a new connection before its
	 * answer ({@code ServletWrites.Ending}).
	 */
	@Test
	void clientsLeavingManyStreamsAtOnceLeaveEveryOtherConnectionAnswered() throws IOException {
		LiveConnections live = app.getBean(LiveConnections.class);
		WebCalls.push(http, "tomcat-left", "hi");
		for (int round = 0; round < 3; round++) {
			List<Socket> streams = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				Socket socket = new Socket("localhost", port);
				send(socket, "GET /a2/chat/sessions/tomcat-left/stream HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n");
				streams.add(socket);
			}
			// every new stream is served: none is closed by what the streams of the round before left behind
			await().atMost(Duration.ofSeconds(30)).until(() -> live.streams() == streams.size());
			for (int i = 0; i < streams.size(); i++) {
				if (i % 2 == 0) {
					// half of them reset, as a client killed or a network gone does
					streams.get(i).setSoLinger(true, 0);
				}
				streams.get(i).close();
			}
			int answered = 0;
			long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
			while (live.streams() > 0 || answered < 50) {
				assertThat(System.nanoTime()).as("the streams left in round %d ended within a minute", round).isLessThan(deadline);
				try (Socket socket = new Socket("localhost", port)) {
					socket.setSoTimeout(20_000);
					send(socket, "GET /a2/chat/sessions/tomcat-left/events?after=0 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
					assertThat(new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
						.as("request %d after the streams of round %d were left", answered, round)
						.startsWith("HTTP/1.1 200")
						.contains("\"hi\"");
				}
				answered++;
			}
		}
	}

	private static void send(Socket socket, String request) throws IOException {
		socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
		socket.getOutputStream().flush();
	}

	/** The WebSocket client of Tomcat's standard API, taking frames as large as the server sends. */
	private static WebSocketClient standardClient() {
		WebSocketContainer container = ContainerProvider.getWebSocketContainer();
		container.setDefaultMaxTextMessageBufferSize(1024 * 1024);
		return new StandardWebSocketClient(container);
	}

	/** Registered as a source, not scanned: the other tests of this package run without Tomcat. */
	static class TomcatServer {

		@Bean
		TomcatReactiveWebServerFactory tomcatReactiveWebServerFactory() {
			return new TomcatReactiveWebServerFactory(0);
		}

	}

}
