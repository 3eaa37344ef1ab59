package dev.a2.web;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.ErrorCode;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.SessionFeeds;
import dev.a2.wire.Wire;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.PathContainer;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The routes of §10 under the base path: push, history, stream, state, presence and clear of a
 * session, and the JavaScript client ({@code client.js}, {@code react.js}) pages import. Every store call runs on the store scheduler, never on an event loop; every failure answers
 * {@code {"error":{"code","message"}}} with its status.
 */
public final class A2Routes {

	private final SessionHandlers sessions;

	private final StreamHandler streams;

	private final Wire wire;

	private final String basePath;

	private final ClientScripts scripts = new ClientScripts();

	/** The routes over a server, with the parts {@link A2Endpoints} and the auto-configuration share. */
	public A2Routes(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence, A2Authorizer authorizer,
			Scheduler scheduler, A2WebSettings settings, ObservationRegistry observations, LiveConnections connections) {
		Access access = new Access(server, authorizer, settings);
		this.wire = wire;
		this.basePath = settings.basePath();
		this.sessions = new SessionHandlers(server, wire, access, scheduler, observations);
		this.streams = new StreamHandler(server, wire, feeds, presence, access, scheduler, settings, observations,
				connections);
	}

	/** The servlet API, where WebFlux may run on a servlet container (Tomcat) and not on Reactor Netty. */
	private static final boolean SERVLET_API = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest",
			A2Routes.class.getClassLoader());

	/** A session's path, relative to the base path: the routes', and the servlet's push ({@link ServletPush}). */
	static final String SESSION = "/{contract}/sessions/{session}";

	/**
	 * The methods each path of {@link #routes()} answers, relative to the base path: a request no route
	 * took on one of these paths asked with another method is answered 405 with them as {@code Allow}.
	 * Keep it in step with the routes. (The socket's handler mapping answers every method itself.)
	 */
	private static final Map<String, List<HttpMethod>> METHODS = Map.of(
			SESSION + "/events", List.of(HttpMethod.GET, HttpMethod.POST),
			SESSION + "/stream", List.of(HttpMethod.GET),
			SESSION + "/state/{reducer}", List.of(HttpMethod.GET),
			SESSION + "/presence", List.of(HttpMethod.GET, HttpMethod.PUT),
			SESSION, List.of(HttpMethod.DELETE),
			"/{file:[a-z]+\\.(?:js|d\\.ts)}", List.of(HttpMethod.GET));

	/**
	 * The methods A2 answers at {@code path} (within the application), or {@code null} when no route of
	 * A2 has that path.
	 */
	static @Nullable List<HttpMethod> methodsAt(String basePath, PathContainer path) {
		for (Map.Entry<String, List<HttpMethod>> route : METHODS.entrySet()) {
			if (PathPatternParser.defaultInstance.parse(basePath + route.getKey()).matches(path)) {
				return route.getValue();
			}
		}
		return null;
	}

	/** Push, history, stream, state, presence and clear under the base path. */
	public RouterFunction<ServerResponse> routes() {
		String session = this.basePath + SESSION;
		return RouterFunctions.route()
			.POST(session + "/events", deferred(this.sessions::push))
			.GET(session + "/events", deferred(this.sessions::history))
			.GET(session + "/stream", deferred(this.streams::stream))
			.GET(session + "/state/{reducer}", deferred(this.sessions::state))
			.GET(session + "/presence", deferred(this.sessions::presence))
			.PUT(session + "/presence", deferred(this.sessions::writePresence))
			.DELETE(session, deferred(this.sessions::clear))
			.GET(this.basePath + "/{file:[a-z]+\\.(?:js|d\\.ts)}", this.scripts::serve)
			.onError(Throwable.class, (ex, request) -> WebErrors.response(ex, this.wire))
			.filter(SERVLET_API ? ServletWrites.onServletContainers() : (request, next) -> next.handle(request))
			.build();
	}

	/** The push route's work, for {@link A2Servlet} to serve a push on the container's thread. */
	ServletPush servletPush() {
		return new ServletPush(this.sessions, this.wire);
	}

	/** Handlers check their path and parameters before any store call: what they throw answers as an error. */
	private HandlerFunction<ServerResponse> deferred(HandlerFunction<ServerResponse> handler) {
		return (request) -> Mono.defer(() -> {
			// the path matcher drops ";x" from a segment: "room;x" would address session "room"
			if (request.requestPath().value().indexOf(';') >= 0) {
				throw new A2Exception(ErrorCode.INVALID_PAYLOAD,
						"the path holds ';': contract names and session ids are letters, digits and . _ : ~ -");
			}
			return handler.handle(request);
		}).onErrorResume((ex) -> unreadBodyDiscarded(request).then(Mono.error(ex)));
	}

	/**
	 * Reads what is left of a refused request's body, up to its bound ({@link #unreadBodyBound(long)}),
	 * before the error answers.
	 * Reactor Netty 1.3 stops reading a keep-alive connection when the next request arrives before the
	 * refused one's body was read (reactor/reactor-netty#4361): the client's next request on it would hang.
	 * A body already read, or cut off at the limit, cannot be subscribed again; that is not an error here.
	 */
	private Mono<Void> unreadBodyDiscarded(ServerRequest request) {
		return unreadBodyDiscarded(request.exchange(), this.wire.limits().maxBytes());
	}

	/**
	 * What is left of the exchange's body, read and dropped; nothing for a request without a body. Its
	 * body was asked for all the same, on the A2 store thread a route had failed on (a read of a contract
	 * that does not exist), and Tomcat, asked whether any of it was ready, ran a pending write on that
	 * thread, which Reactor had interrupted: the connection closed before the answer.
	 */
	static Mono<Void> unreadBodyDiscarded(ServerWebExchange exchange, long maxBytes) {
		if (!A2UnreadBodyFilter.hasBody(exchange.getRequest())) {
			return Mono.empty();
		}
		return unreadBodyDiscarded(exchange.getRequest().getBody(), maxBytes);
	}

	/**
	 * The least of a refused body that is read before the answer, whatever the push limit: Tomcat's own
	 * ({@code maxSwallowSize}). Jetty closes the connection of an answer whose request's body was left
	 * unread, without saying so in the answer: the client's next request on it was lost ("closed BEFORE
	 * response" in CI, after a 1 MB push over the 256 kB limit), or a client still sending the body met
	 * the close before the answer. A body read to its end keeps its connection.
	 */
	static final long UNREAD_BODY_READ_AT_LEAST = 2 * 1024 * 1024;

	/** How much of a refused body is read before the answer: the push limit, at least {@link #UNREAD_BODY_READ_AT_LEAST}. */
	static long unreadBodyBound(long maxBytes) {
		return Math.max(maxBytes, UNREAD_BODY_READ_AT_LEAST);
	}

	/**
	 * Reads and releases a body up to {@link #unreadBodyBound(long)} of {@code maxBytes}, then stops. Not
	 * {@code DataBufferUtils.takeUntilByteCount}: a servlet container's body goes on publishing for a
	 * moment after it is cancelled, and that operator fails on a buffer past its count, once the count
	 * was reached, which Reactor can only log as an ERROR (one per oversized push). Here such a buffer is
	 * released and dropped.
	 */
	static Mono<Void> unreadBodyDiscarded(Flux<DataBuffer> body, long maxBytes) {
		AtomicLong left = new AtomicLong(unreadBodyBound(maxBytes));
		return body.doOnNext((buffer) -> {
			left.addAndGet(-buffer.readableByteCount());
			DataBufferUtils.release(buffer);
		}).takeUntil((buffer) -> left.get() <= 0).then().onErrorComplete();
	}

}
