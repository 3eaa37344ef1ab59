package dev.a2.autoconfigure;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.a2.test.TestPostgres;
import dev.a2.web.LiveConnections;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Many streams whose clients leave at once, in a Spring MVC application on Tomcat (and on Jetty, in the
 * execution of the Jetty tests): each stream fails its next write (a ping every second here), and every
 * other connection of the server is answered as before. On Tomcat, without {@code ServletWrites.Ending},
 * a fresh request was answered with nothing, or a new stream closed at once, in every run.
 */
@SpringBootTest(classes = A2RoutesServletIntegrationTests.MvcApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "a2.web.ping=1s" })
class StreamsLeftServletIntegrationTests {

	private static final String PUSH = "{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"hi\",\"author\":\"ann\"}}]}";

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		TestPostgres.properties("streamsleft", registry::add);
	}

	@LocalServerPort
	private int port;

	@Autowired
	private LiveConnections live;

	@Test
	void clientsLeavingManyStreamsAtOnceLeaveEveryOtherConnectionAnswered() throws IOException {
		assertThat(answer("POST", "/a2/chat/sessions/room-left/events", PUSH)).startsWith("HTTP/1.1 200");
		for (int round = 0; round < 3; round++) {
			List<Socket> streams = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				Socket socket = new Socket("localhost", this.port);
				send(socket, "GET", "/a2/chat/sessions/room-left/stream", null, false);
				streams.add(socket);
			}
			// every new stream is served: none is closed by what the streams of the round before left behind
			await().atMost(Duration.ofSeconds(30)).until(() -> this.live.streams() == streams.size());
			for (int i = 0; i < streams.size(); i++) {
				Socket socket = streams.get(i);
				if (i % 2 == 0) {
					// half of them reset, as a client killed or a network gone does
					socket.setSoLinger(true, 0);
				}
				socket.close();
			}
			// while the streams fail their next writes, one after another
			int answered = 0;
			long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
			while (this.live.streams() > 0 || answered < 50) {
				assertThat(System.nanoTime()).as("the streams left in round %d ended within a minute", round).isLessThan(deadline);
				assertThat(answer("GET", "/a2/chat/sessions/room-left/events?after=0", null))
					.as("request %d after the streams of round %d were left", answered, round)
					.startsWith("HTTP/1.1 200")
					.contains("\"hi\"");
				answered++;
			}
		}
	}

	/** The whole answer to one request on a connection of its own, which the server closes after it. */
	private String answer(String method, String path, String body) throws IOException {
		try (Socket socket = new Socket("localhost", this.port)) {
			socket.setSoTimeout(20_000);
			send(socket, method, path, body, true);
			return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		}
	}

	private static void send(Socket socket, String method, String path, String body, boolean close) throws IOException {
		byte[] bytes = (body != null) ? body.getBytes(StandardCharsets.UTF_8) : new byte[0];
		StringBuilder request = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n");
		if (body != null) {
			request.append("Content-Type: application/json\r\nContent-Length: ").append(bytes.length).append("\r\n");
		}
		request.append(close ? "Connection: close\r\n" : "Accept: text/event-stream\r\n").append("\r\n");
		OutputStream out = socket.getOutputStream();
		out.write(request.toString().getBytes(StandardCharsets.US_ASCII));
		out.write(bytes);
		out.flush();
	}

}
