package dev.a2.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.a2.A2Server;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.SessionFeeds;
import dev.a2.wire.Wire;
import dev.a2.wire.WireLimits;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;
import org.springframework.web.reactive.socket.server.support.HandshakeWebSocketService;

/**
 * A2's endpoints (§10) put together from an {@link A2Server}, for an application that wires A2 itself:
 * register {@link #routerFunction()}, {@link #socketMapping()}, {@link #exceptionHandler()},
 * {@link #connections()} and {@link #unreadBodyFilter()} as beans of a WebFlux application, and
 * {@link #close()} it on shutdown.
 * Spring Boot's auto-configuration builds the same parts one bean at a time, each replaceable.
 *
 * <pre class="code">
 * A2Endpoints endpoints = A2Endpoints.builder(server)
 *     .authorizer((caller, permission, contract, session) -&gt; caller != null)
 *     .build();
 * </pre>
 */
public final class A2Endpoints implements AutoCloseable {

	private final RouterFunction<ServerResponse> routes;

	private final SimpleUrlHandlerMapping socketMapping;

	private final A2WebExceptionHandler exceptionHandler;

	private final LiveConnections connections;

	private final A2UnreadBodyFilter unreadBodyFilter;

	private final SessionFeeds feeds;

	private final PresenceFeeds presence;

	private final Scheduler scheduler;

	private A2Endpoints(Builder builder, A2Authorizer authorizer) {
		A2Server server = builder.server;
		this.scheduler = Schedulers.newBoundedElastic(builder.storeThreads, 100_000, "a2-store");
		Wire wire = new Wire(builder.jsonMapper, builder.limits);
		this.feeds = new SessionFeeds(server.eventStore(), server.changes(), this.scheduler, builder.poll);
		this.presence = new PresenceFeeds(server.changes(),
				(contract, session) -> server.session(contract, session).presence(), this.scheduler, builder.poll,
				server.clock());
		this.connections = new LiveConnections();
		this.routes = new A2Routes(server, wire, this.feeds, this.presence, authorizer, this.scheduler, builder.settings,
				builder.observations, this.connections)
			.routes();
		A2SocketHandler socket = new A2SocketHandler(server, wire, this.feeds, this.presence, authorizer, this.scheduler,
				builder.settings, builder.observations, this.connections);
		this.socketMapping = socketMapping(socket, builder.settings, builder.limits.maxBytes());
		this.exceptionHandler = new A2WebExceptionHandler(builder.jsonMapper, builder.settings.basePath());
		this.unreadBodyFilter = new A2UnreadBodyFilter(builder.settings.basePath(), builder.limits.maxBytes());
	}

	/** Endpoints over {@code server}; an authorizer must be given. */
	public static Builder builder(A2Server server) {
		return new Builder(server);
	}

	/**
	 * The socket's handler mapping at {@code {basePath}/{contract}/socket}: the handshake refuses pages
	 * of origins the settings do not allow, and frames up to twice {@code maxPushBytes} reach the handler,
	 * which answers them with an error frame; beyond that the socket is closed (1009), as such a frame
	 * cannot be read to answer it.
	 */
	public static SimpleUrlHandlerMapping socketMapping(A2SocketHandler handler, A2WebSettings settings,
			long maxPushBytes) {
		int maxFrame = (int) Math.min(Integer.MAX_VALUE, maxPushBytes * 2);
		HandshakeWebSocketService service = new HandshakeWebSocketService(new SocketUpgrade(maxFrame));
		SocketHandshake handshake = new SocketHandshake(service, handler, handler.wire(), settings.allowedOrigins());
		// before annotated controllers (0) and the router functions (-1), so no catch-all route takes it
		return new SimpleUrlHandlerMapping(Map.of(settings.basePath() + "/*/socket", handshake), -2);
	}

	/** Push, history, stream, state, presence and clear under the base path. */
	public RouterFunction<ServerResponse> routerFunction() {
		return this.routes;
	}

	/** The socket, as a handler mapping ordered before the application's routes. */
	public SimpleUrlHandlerMapping socketMapping() {
		return this.socketMapping;
	}

	/**
	 * Answers A2's failures outside the routes (a body too large, a path or method under the base path
	 * no route matched: 404 {@code NOT_FOUND}, 405 {@code METHOD_NOT_ALLOWED}) in A2's error format. It
	 * orders itself before WebFlux's own ({@link A2WebExceptionHandler#ORDER}), so a bean registered
	 * without an order of its own answers them.
	 */
	public A2WebExceptionHandler exceptionHandler() {
		return this.exceptionHandler;
	}

	/**
	 * The open streams and sockets; as a bean ({@link org.springframework.context.SmartLifecycle}) it
	 * ends them when the application stops, before the web server's graceful shutdown waits for them.
	 */
	public LiveConnections connections() {
		return this.connections;
	}

	/**
	 * Reads the body of a request under the base path that a filter before A2 refused unread (Spring
	 * Security's CSRF check), so that Reactor Netty goes on reading its keep-alive connection; a
	 * {@link org.springframework.web.server.WebFilter} ordered before Spring Security's chain.
	 */
	public A2UnreadBodyFilter unreadBodyFilter() {
		return this.unreadBodyFilter;
	}

	/** Stops the live feeds and the store threads of the endpoints. */
	@Override
	public void close() {
		this.feeds.close();
		this.presence.close();
		this.scheduler.dispose();
	}

	/** How the endpoints are built; every setting but the authorizer has the documented default. */
	public static final class Builder {

		private final A2Server server;

		private @Nullable A2Authorizer authorizer;

		private A2WebSettings settings = new A2WebSettings("/a2", Duration.ofSeconds(15), 100, List.of());

		private WireLimits limits = WireLimits.DEFAULTS;

		private Duration poll = Duration.ofSeconds(1);

		private int storeThreads = 32;

		private JsonMapper jsonMapper = JsonMapper.builder().build();

		private ObservationRegistry observations = ObservationRegistry.NOOP;

		private Builder(A2Server server) {
			this.server = Objects.requireNonNull(server, "server");
		}

		/**
		 * Who may read, push, write presence and clear; {@link A2Authorizer#permitAll()} opens them to all.
		 * The {@code a2} actuator endpoint, where an application has one, takes the same authorizer.
		 */
		public Builder authorizer(A2Authorizer authorizer) {
			this.authorizer = Objects.requireNonNull(authorizer, "authorizer");
			return this;
		}

		/**
		 * Base path, pings, subscriptions per socket, allowed origins, presence participants and re-checks
		 * of open streams (default {@code /a2}, 15 s, 100, none, {@link PresenceParticipant#CALLER}, 1 min).
		 */
		public Builder settings(A2WebSettings settings) {
			this.settings = Objects.requireNonNull(settings, "settings");
			return this;
		}

		/**
		 * As whom a caller may write presence: by default ({@link PresenceParticipant#CALLER}) a caller with
		 * a name only as that participant; {@link PresenceParticipant#ANY} leaves it to the authorizer.
		 */
		public Builder presenceParticipant(PresenceParticipant presenceParticipant) {
			A2WebSettings current = this.settings;
			this.settings = new A2WebSettings(current.basePath(), current.ping(), current.maxSubscriptionsPerSocket(),
					current.allowedOrigins(), Objects.requireNonNull(presenceParticipant, "presenceParticipant"),
					current.reauthorizeEvery());
			return this;
		}

		/**
		 * How often an open SSE stream or socket subscription asks the authorizer again whether its caller
		 * may still {@link A2Permission#READ read} its session (default one minute,
		 * {@link A2WebSettings#REAUTHORIZE_EVERY}); one it may no longer read ends. {@link Duration#ZERO}
		 * never asks again: a caller the authorizer stops allowing then reads on until the connection ends.
		 */
		public Builder reauthorizeEvery(Duration reauthorizeEvery) {
			A2WebSettings current = this.settings;
			this.settings = new A2WebSettings(current.basePath(), current.ping(), current.maxSubscriptionsPerSocket(),
					current.allowedOrigins(), current.presenceParticipant(),
					Objects.requireNonNull(reauthorizeEvery, "reauthorizeEvery"));
			return this;
		}

		/** How large bodies and frames may be ({@link WireLimits#DEFAULTS} by default). */
		public Builder limits(WireLimits limits) {
			this.limits = Objects.requireNonNull(limits, "limits");
			return this;
		}

		/** How often a live stream reads the store when no notification came (default 1 s). */
		public Builder poll(Duration poll) {
			this.poll = Objects.requireNonNull(poll, "poll");
			return this;
		}

		/** Threads for the endpoints' store calls, never an event loop (default 32). */
		public Builder storeThreads(int storeThreads) {
			if (storeThreads < 1) {
				throw new IllegalArgumentException("storeThreads must be at least 1, was " + storeThreads);
			}
			this.storeThreads = storeThreads;
			return this;
		}

		/** The mapper of bodies and frames (the server's payload mapping is the server's own). */
		public Builder jsonMapper(JsonMapper jsonMapper) {
			this.jsonMapper = Objects.requireNonNull(jsonMapper, "jsonMapper");
			return this;
		}

		/** Where the endpoints' observations ({@code a2.push}, {@code a2.stream}) go; none by default. */
		public Builder observationRegistry(ObservationRegistry observations) {
			this.observations = Objects.requireNonNull(observations, "observations");
			return this;
		}

		/** The endpoints; it refuses to build without an authorizer. */
		public A2Endpoints build() {
			if (this.authorizer == null) {
				throw new IllegalStateException("A2Endpoints needs an A2Authorizer to decide who may read, push, "
						+ "write presence and clear: give one, or A2Authorizer.permitAll() to open them to every caller");
			}
			return new A2Endpoints(this, this.authorizer);
		}

	}

}
