package dev.a2.web;

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.WebFilter;

/** Calls the web tests make on the chat contract of {@link ChatApplication}, over real HTTP. */
final class WebCalls {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE = new ParameterizedTypeReference<>() {
	};

	private WebCalls() {
	}

	/** A client of an instance, with whichever HTTP connector the classpath has. */
	/** The caller named by a request's {@code X-User} header, as a login would set it; none without it. */
	static WebFilter callerFromHeader() {
		return (exchange, chain) -> {
			String user = exchange.getRequest().getHeaders().getFirst("X-User");
			if (user == null) {
				return chain.filter(exchange);
			}
			Principal principal = () -> user;
			return chain.filter(exchange.mutate().principal(Mono.just(principal)).build());
		};
	}

	static WebClient client(ConfigurableApplicationContext instance) {
		return WebClient.builder()
			.baseUrl("http://localhost:" + Instances.port(instance))
			.codecs((codecs) -> codecs.defaultCodecs().maxInMemorySize(1024 * 1024))
			.build();
	}

	/** A session's SSE stream, its events frames only. */
	static Flux<ServerSentEvent<String>> stream(WebClient client, String session, String lastEventId) {
		return client.get()
			.uri("/a2/chat/sessions/{session}/stream", session)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.headers((headers) -> {
				if (lastEventId != null) {
					headers.set("Last-Event-ID", lastEventId);
				}
			})
			.retrieve()
			.bodyToFlux(SSE)
			.filter((event) -> "events".equals(event.event()));
	}

	/** Pushes one message, waiting for the answer. */
	static void push(WebClient client, String session, String text) {
		client.post()
			.uri("/a2/chat/sessions/{session}/events", session)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"events\":[{\"type\":\"message.sent\",\"payload\":{\"text\":\"" + text + "\",\"author\":\"w\"}}]}")
			.retrieve()
			.toBodilessEntity()
			.block(Duration.ofSeconds(30));
	}

	/** Writes {@code participant}'s {@code typing: true}, waiting for the answer. */
	static void typing(WebClient client, String session, String participant) {
		client.put()
			.uri("/a2/chat/sessions/{session}/presence", session)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"participant\":\"" + participant + "\",\"values\":{\"typing\":true}}")
			.retrieve()
			.toBodilessEntity()
			.block(Duration.ofSeconds(30));
	}

	/** The indexes of an events frame. */
	static List<Long> indexes(ServerSentEvent<String> event) {
		List<Long> indexes = new ArrayList<>();
		for (JsonNode stored : json.readTree(event.data()).get("events")) {
			indexes.add(stored.get("index").asLong());
		}
		return indexes;
	}

}
