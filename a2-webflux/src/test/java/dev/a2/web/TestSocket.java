package dev.a2.web;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import org.awaitility.core.ConditionTimeoutException;
import reactor.core.Disposable;
import reactor.core.publisher.Sinks;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.socket.CloseStatus;
import org.springframework.web.reactive.socket.client.ReactorNettyWebSocketClient;
import org.springframework.web.reactive.socket.client.WebSocketClient;

import static org.awaitility.Awaitility.await;

/** A real WebSocket client for tests: sends frames, keeps every frame received. */
final class TestSocket implements AutoCloseable {

	private static final JsonMapper json = JsonMapper.builder().build();

	final List<JsonNode> received = new CopyOnWriteArrayList<>();

	/** How the server closed the socket, once it has. */
	final AtomicReference<CloseStatus> closeStatus = new AtomicReference<>();

	private final Sinks.Many<String> outgoing = Sinks.many().unicast().onBackpressureBuffer();

	private final Disposable connection;

	TestSocket(int port, String contract) {
		this(NettyClient.create(), port, contract);
	}

	TestSocket(WebSocketClient client, int port, String contract) {
		this(client, URI.create("ws://localhost:" + port + "/a2/" + contract + "/socket"), new HttpHeaders());
	}

	TestSocket(URI uri, HttpHeaders headers) {
		this(NettyClient.create(), uri, headers);
	}

	private TestSocket(WebSocketClient client, URI uri, HttpHeaders headers) {
		this.connection = client.execute(uri, headers, (session) -> session
			.send(this.outgoing.asFlux().map(session::textMessage))
			.and(session.receive().doOnNext((message) -> this.received.add(json.readTree(message.getPayloadAsText()))).then())
			.and(session.closeStatus().doOnNext(this.closeStatus::set)))
			.subscribe();
	}

	void send(String frame) {
		this.outgoing.tryEmitNext(frame);
	}

	/** The first frame received that matches, waiting for it. */
	JsonNode awaitFrame(Predicate<JsonNode> frame) {
		try {
			await().atMost(Duration.ofSeconds(20)).until(() -> this.received.stream().anyMatch(frame));
		}
		catch (ConditionTimeoutException ex) {
			throw new AssertionError("the frame did not come; the socket received " + this.received, ex);
		}
		return this.received.stream().filter(frame).findFirst().orElseThrow();
	}

	static Predicate<JsonNode> type(String type) {
		return (frame) -> type.equals(frame.path("type").asString());
	}

	static Predicate<JsonNode> type(String type, String session) {
		return (frame) -> type.equals(frame.path("type").asString()) && session.equals(frame.path("session").asString());
	}

	@Override
	public void close() {
		this.outgoing.tryEmitComplete();
		this.connection.dispose();
	}

	/** Reactor Netty's client, loaded only by the tests that have it. */
	private static final class NettyClient {

		static WebSocketClient create() {
			// a connection of its own, as a browser opens for a socket, not one a request left in the pool
			return new ReactorNettyWebSocketClient(HttpClient.newConnection());
		}

	}

}
