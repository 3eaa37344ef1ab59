package dev.a2.benchmarks;

import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * What an application would write instead of A2's push: a functional WebFlux route that binds the
 * same body with Jackson and inserts the event with {@link JdbcClient} on {@code boundedElastic}, one
 * row in auto-commit into a table of its own, and answers a small JSON. No validation beyond the
 * binding, no idempotent retry, no notification: the least a push can do.
 */
final class BaselinePush {

	static final String PATH = "/baseline/sessions/{session}/events";

	private static final String TABLE = """
			CREATE TABLE IF NOT EXISTS baseline_event (
				seq bigserial PRIMARY KEY,
				session_id text NOT NULL,
				id text NOT NULL,
				type text NOT NULL,
				payload jsonb NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now(),
				UNIQUE (session_id, id))""";

	private static final String INSERT = """
			INSERT INTO baseline_event (session_id, id, type, payload) VALUES (?, ?, ?, ?::jsonb) RETURNING seq""";

	record Push(List<Item> events) {
	}

	record Item(@Nullable String id, String type, Benchmarks.Tick payload) {
	}

	record Stored(String id, long seq) {
	}

	private final JdbcClient jdbc;

	private final JsonMapper json;

	BaselinePush(DataSource dataSource, JsonMapper json) {
		this.jdbc = JdbcClient.create(dataSource);
		this.json = json;
		this.jdbc.sql(TABLE).update();
	}

	RouterFunction<ServerResponse> route() {
		return RouterFunctions.route().POST(PATH, this::push).build();
	}

	private Mono<ServerResponse> push(ServerRequest request) {
		String session = request.pathVariable("session");
		return request.bodyToMono(Push.class)
			// the benchmark pushes one event per request: the route stores the first
			.map((push) -> push.events().get(0))
			.flatMap((event) -> Mono.fromCallable(() -> insert(session, event)).subscribeOn(Schedulers.boundedElastic()))
			.flatMap((stored) -> ServerResponse.ok().bodyValue(stored));
	}

	Stored insert(String session, Item event) {
		String id = (event.id() != null) ? event.id() : UUID.randomUUID().toString();
		long seq = this.jdbc.sql(INSERT)
			.params(session, id, event.type(), this.json.writeValueAsString(event.payload()))
			.query(Long.class)
			.single();
		return new Stored(id, seq);
	}

}
