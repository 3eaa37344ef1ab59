package dev.a2.web;

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.A2Server;
import dev.a2.Contract;
import dev.a2.store.postgres.PostgresSchema;
import dev.a2.store.postgres.PostgresSessionChanges;
import dev.a2.test.TestPostgres;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The endpoints in an application with no Spring Boot at all: a plain Spring context with
 * {@code @EnableWebFlux}, an {@link A2Server} built by hand and the parts of {@link A2Endpoints} as its
 * beans, served by Reactor Netty. A push is stored and answered, and the stream serves it; the
 * builder's settings hold.
 */
class WithoutSpringBootIntegrationTests {

	record Note(String text) {
	}

	@Test
	void aPlainWebFluxApplicationServesPushAndStream() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("without_boot", 4);
				PostgresSessionChanges changes = new PostgresSessionChanges(dataSource)) {
			PostgresSchema.migrate(dataSource);
			A2Server server = A2Server.builder()
				.dataSource(dataSource)
				.sessionChanges(changes)
				.contract(Contract.builder("notes").event("note.added", Note.class).build())
				.build();
			try (A2Endpoints endpoints = A2Endpoints.builder(server).authorizer(A2Authorizer.permitAll()).build();
					AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
				context.register(WebFluxOnly.class);
				context.registerBean("a2RouterFunction", RouterFunction.class,
						endpoints::routerFunction);
				context.registerBean("a2SocketMapping", SimpleUrlHandlerMapping.class,
						endpoints::socketMapping);
				context.registerBean("a2WebExceptionHandler", A2WebExceptionHandler.class, endpoints::exceptionHandler);
				context.registerBean("a2UnreadBodyFilter", A2UnreadBodyFilter.class, endpoints::unreadBodyFilter);
				context.refresh();
				HttpHandler handler = WebHttpHandlerBuilder.applicationContext(context).build();
				DisposableServer http = HttpServer.create().port(0).handle(new ReactorHttpHandlerAdapter(handler)).bindNow();
				try {
					WebClient client = WebClient.create("http://localhost:" + http.port() + "/a2/notes/sessions/plain");
					String pushed = client.post()
						.uri("/events")
						.contentType(MediaType.APPLICATION_JSON)
						.bodyValue("{\"events\":[{\"id\":\"n-1\",\"type\":\"note.added\",\"payload\":{\"text\":\"hello\"}}]}")
						.retrieve()
						.bodyToMono(String.class)
						.block(Duration.ofSeconds(20));
					assertThat(pushed).contains("\"index\":1").contains("\"id\":\"n-1\"");

					List<String> streamed = new ArrayList<>();
					client.get()
						.uri("/stream")
						.accept(MediaType.TEXT_EVENT_STREAM)
						.retrieve()
						.bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
						})
						.filter((event) -> "events".equals(event.event()))
						.take(1)
						.doOnNext((event) -> streamed.add(event.id() + " " + event.data()))
						.blockLast(Duration.ofSeconds(20));
					assertThat(streamed).singleElement().asString().startsWith("1 ").contains("hello");

					String refused = client.post()
						.uri("/events")
						.contentType(MediaType.APPLICATION_JSON)
						.bodyValue("{\"events\":[]}")
						.exchangeToMono((response) -> response.bodyToMono(String.class)
							.map((body) -> response.statusCode().value() + " " + body))
						.block(Duration.ofSeconds(20));
					assertThat(refused).startsWith("400 ").contains("\"code\":\"INVALID_PAYLOAD\"");

					// registered as docs/web.md shows, without an order: it orders itself before WebFlux's own
					// handler, which answered both with an empty 404
					WebClient a2 = WebClient.create("http://localhost:" + http.port() + "/a2");
					String noRoute = a2.get().uri("/notes/nowhere").exchangeToMono((response) -> response.bodyToMono(String.class)
						.map((body) -> response.statusCode().value() + " " + body)).block(Duration.ofSeconds(20));
					assertThat(noRoute).startsWith("404 ").contains("\"code\":\"NOT_FOUND\"");
					String wrongMethod = a2.get().uri("/notes/sessions/plain").exchangeToMono((response) -> response
						.bodyToMono(String.class)
						.map((body) -> response.statusCode().value() + " " + response.headers().asHttpHeaders().getAllow()
								+ " " + body))
						.block(Duration.ofSeconds(20));
					assertThat(wrongMethod).startsWith("405 [DELETE] ").contains("\"code\":\"METHOD_NOT_ALLOWED\"");
				}
				finally {
					http.disposeNow();
				}
			}
			finally {
				server.close();
			}
		}
	}

	@Test
	void theBuilderSaysAsWhomACallerWritesPresence() {
		try (HikariDataSource dataSource = TestPostgres.newSchemaDataSource("without_boot_presence", 4);
				PostgresSessionChanges changes = new PostgresSessionChanges(dataSource)) {
			PostgresSchema.migrate(dataSource);
			A2Server server = A2Server.builder()
				.dataSource(dataSource)
				.sessionChanges(changes)
				.contract(Contract.builder("notes").event("note.added", Note.class).presence("typing", Boolean.class).build())
				.build();
			String asBot = "{\"participant\":\"bot\",\"values\":{\"typing\":true}}";
			try {
				// by default, a caller with a name writes only as itself
				try (A2Endpoints endpoints = A2Endpoints.builder(server).authorizer(A2Authorizer.permitAll()).build()) {
					assertThat(putPresence(endpoints, "ann", asBot)).startsWith("403 ").contains("\"code\":\"FORBIDDEN\"");
					assertThat(server.session("notes", "plain").presence().participants()).isEmpty();
				}
				try (A2Endpoints endpoints = A2Endpoints.builder(server)
					.authorizer(A2Authorizer.permitAll())
					.presenceParticipant(PresenceParticipant.ANY)
					.build()) {
					assertThat(putPresence(endpoints, "ann", asBot)).startsWith("200 ");
					assertThat(server.session("notes", "plain").presence().participants()).containsOnlyKeys("bot");
				}
			}
			finally {
				server.close();
			}
		}
	}

	/** A presence write to session {@code plain} by a caller named {@code user}: its status and body. */
	private static String putPresence(A2Endpoints endpoints, String user, String write) {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(WebFluxOnly.class);
			context.registerBean("a2RouterFunction", RouterFunction.class, endpoints::routerFunction);
			context.registerBean("a2WebExceptionHandler", A2WebExceptionHandler.class, endpoints::exceptionHandler);
			context.registerBean("caller", WebFilter.class, () -> (exchange, chain) -> chain
				.filter(exchange.mutate().principal(Mono.just((Principal) () -> user)).build()));
			context.refresh();
			HttpHandler handler = WebHttpHandlerBuilder.applicationContext(context).build();
			DisposableServer http = HttpServer.create().port(0).handle(new ReactorHttpHandlerAdapter(handler)).bindNow();
			try {
				return WebClient.create("http://localhost:" + http.port() + "/a2/notes/sessions/plain")
					.put()
					.uri("/presence")
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue(write)
					.exchangeToMono((response) -> response.bodyToMono(String.class)
						.map((body) -> response.statusCode().value() + " " + body))
					.block(Duration.ofSeconds(20));
			}
			finally {
				http.disposeNow();
			}
		}
	}

	@EnableWebFlux
	static class WebFluxOnly {

	}

}
