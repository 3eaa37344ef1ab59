package dev.a2.web;

import java.security.Principal;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.A2Exception;
import dev.a2.A2Observations;
import dev.a2.A2Server;
import dev.a2.Session;
import dev.a2.SessionState;
import dev.a2.live.FeedItem;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.PresenceUpdate;
import dev.a2.live.SessionFeeds;
import dev.a2.wire.Wire;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The SSE stream of a session: {@code events} (history first, then live, the id the batch's last
 * index), {@code presence} (a snapshot, then patches), {@code cleared}, {@code state} with
 * {@code ?state=<reducer>}, and a comment ping when idle.
 */
final class StreamHandler {

	private static final Log logger = LogFactory.getLog(StreamHandler.class);

	private final A2Server server;

	private final Wire wire;

	private final SessionFeeds feeds;

	private final PresenceFeeds presence;

	private final Access access;

	private final Scheduler scheduler;

	private final A2WebSettings settings;

	private final ObservationRegistry observations;

	private final LiveConnections connections;

	StreamHandler(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence, Access access,
			Scheduler scheduler, A2WebSettings settings, ObservationRegistry observations, LiveConnections connections) {
		this.server = server;
		this.wire = wire;
		this.feeds = feeds;
		this.presence = presence;
		this.access = access;
		this.scheduler = scheduler;
		this.settings = settings;
		this.observations = observations;
		this.connections = connections;
	}

	Mono<ServerResponse> stream(ServerRequest request) {
		String contract = SessionHandlers.contract(request);
		String id = SessionHandlers.sessionId(request);
		String lastEventId = request.headers().firstHeader("Last-Event-ID");
		long after = (lastEventId != null && !lastEventId.isBlank()) ? SessionHandlers.wholeNumber(lastEventId.trim(), "Last-Event-ID")
				: SessionHandlers.longParam(request, "after", 0);
		String reducer = SessionHandlers.queryParam(request, "state").orElse(null);
		return Mono.deferContextual((context) -> stream(request, RequestObservation.of(context), contract, id, after, reducer));
	}

	private Mono<ServerResponse> stream(ServerRequest request, @Nullable Observation observed, String contract, String id,
			long after, @Nullable String reducer) {
		return request.principal()
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((caller) -> Mono.fromCallable(() -> {
				Principal who = Access.caller(caller.orElse(null));
				Session session = this.access.open(who, A2Access.of(A2Permission.READ, contract, id));
				if (reducer != null) {
					session.contract().reducer(reducer);
				}
				return new Opened(session, who, Optional.ofNullable(this.access.openFor(who)));
			}).subscribeOn(this.scheduler))
			.flatMap((opened) -> ServerResponse.ok()
				.contentType(MediaType.TEXT_EVENT_STREAM)
				.header("Cache-Control", "no-cache")
				.header("X-Accel-Buffering", "no")
				.body(BodyInserters.fromServerSentEvents(until(events(opened.session(), after, reducer, observed),
						opened.openFor().orElse(null),
						this.access.readRevoked(opened.caller(), contract, id, this.scheduler)))));
	}

	/**
	 * A session the caller may read, the caller, and how long its stream may stay open
	 * ({@link Access#openFor}).
	 */
	private record Opened(Session session, @Nullable Principal caller, Optional<Duration> openFor) {
	}

	/**
	 * The stream, ended when the caller's credentials expire or the authorizer no longer lets it read the
	 * session ({@link Access#readRevoked}): with a comment saying which (for whoever reads the stream by
	 * hand), then the end, after which the client reconnects with the credentials it has, and is refused
	 * when it may no longer read.
	 */
	private static Flux<ServerSentEvent<String>> until(Flux<ServerSentEvent<String>> stream, @Nullable Duration openFor,
			Mono<?> revoked) {
		ServerSentEvent<String> expired = ServerSentEvent.<String>builder()
			.comment("the caller's credentials expired: reconnect with fresh ones")
			.build();
		ServerSentEvent<String> refused = ServerSentEvent.<String>builder()
			.comment("the caller may no longer read this session: a reconnect is refused")
			.build();
		Mono<ServerSentEvent<String>> expiry = (openFor != null) ? Mono.delay(openFor).thenReturn(expired) : Mono.never();
		// the stream's events pass as they are (its own backpressure, no queue between), until the first of the
		// expiry and a refusal, whose comment then ends it; its own end (the application stops) cancels both
		AtomicReference<ServerSentEvent<String>> why = new AtomicReference<>();
		Mono<ServerSentEvent<String>> ending = Mono.firstWithSignal(expiry, revoked.thenReturn(refused)).doOnNext(why::set);
		return stream.takeUntilOther(ending).concatWith(Mono.fromSupplier(why::get));
	}

	private Flux<ServerSentEvent<String>> events(Session session, long after, @Nullable String reducer,
			@Nullable Observation observed) {
		String contract = session.contract().name();
		Flux<ServerSentEvent<String>> events = this.feeds.events(contract, session.id(), after)
			.concatMap((item) -> frames(session, item, reducer), 1);
		if (reducer != null) {
			events = firstState(session, reducer, after).concatWith(events);
		}
		Flux<ServerSentEvent<String>> presence = this.presence.presence(contract, session.id())
			.map(this::presenceFrame);
		// pings keep a stream open once it has begun: one sent before the first frame began the answer (200)
		// with the first read still to come, so a stream opened while PostgreSQL was unreachable answered 200,
		// pings, then an error comment, instead of 503 STORE_UNAVAILABLE (the pool waits longer than a ping)
		Sinks.Empty<Void> firstFrame = Sinks.empty();
		Flux<ServerSentEvent<String>> pings = firstFrame.asMono()
			.thenMany(Flux.interval(this.settings.ping()))
			.onBackpressureDrop()
			.map((tick) -> ServerSentEvent.<String>builder().comment("ping").build());
		Observation observation = Observation.createNotStarted(A2Observations.STREAM, this.observations)
			.parentObservation(observed)
			.lowCardinalityKeyValue(A2Observations.CONTRACT, contract)
			.lowCardinalityKeyValue(A2Observations.TRANSPORT, "sse")
			.highCardinalityKeyValue(A2Observations.SESSION, session.id());
		AtomicBoolean begun = new AtomicBoolean();
		return Flux.merge(1, events, presence, pings)
			.takeUntilOther(this.connections.stopping())
			.doOnNext((frame) -> {
				begun.set(true);
				firstFrame.tryEmitEmpty();
			})
			.onErrorResume((ex) -> ended(session, ex, begun.get(), observation))
			.doOnSubscribe((subscription) -> {
				observation.start();
				this.connections.streams.incrementAndGet();
			})
			.doFinally((signal) -> {
				this.connections.streams.decrementAndGet();
				observation.stop();
			});
	}

	/**
	 * A stream whose session cannot be read any more (PostgreSQL unreachable, a fault of its rows) ends
	 * with a comment saying why, and the client resumes after the last id it received (§7.5). Its answer
	 * had begun (200): failed instead, it was left unterminated, a broken response to the client, and the
	 * framework logged two stack traces at ERROR for every stream open in an outage. One that fails
	 * before its first frame is answered with the error, as any request.
	 */
	private Flux<ServerSentEvent<String>> ended(Session session, Throwable ex, boolean begun, Observation observation) {
		if (!begun) {
			// nothing sent yet: answered as a request, in A2's error shape (A2WebExceptionHandler)
			return Flux.error(WebErrors.asA2(ex, this.wire));
		}
		observation.error(ex);
		A2Exception error = WebErrors.asA2(ex, this.wire);
		String why = "session '" + session.id() + "' could not be read (" + error.code() + "): " + error.getMessage();
		// said once elsewhere: an outage by the instance's own tasks at WARN, an unexpected failure by
		// asA2 at ERROR; an outage ends every stream open, and each would say it again
		logger.debug("Ended the SSE stream: " + why, ex);
		return Flux.just(ServerSentEvent.<String>builder().comment(why + ": reconnect to resume").build());
	}

	private Flux<ServerSentEvent<String>> frames(Session session, FeedItem item, @Nullable String reducer) {
		ServerSentEvent<String> frame;
		long through;
		if (item instanceof FeedItem.Failed failed) {
			// a stream carries one session: it ends, and the client resumes after the last id it received
			return Flux.error(failed.cause());
		}
		if (item instanceof FeedItem.Events events) {
			through = events.lastIndex();
			frame = ServerSentEvent.<String>builder()
				.event("events")
				.id(Long.toString(through))
				.data(this.wire.events(events.events()))
				.build();
		}
		else {
			through = ((FeedItem.Cleared) item).index();
			frame = ServerSentEvent.<String>builder()
				.event("cleared")
				.id(Long.toString(through))
				.data(this.wire.cleared(through))
				.build();
		}
		if (reducer == null) {
			return Flux.just(frame);
		}
		return Flux.just(frame).concatWith(state(session, reducer, through));
	}

	/**
	 * The state a stream starts with: as of where it starts, not the head, as the history that follows
	 * may come in several frames, each followed by its state, and a client must never be handed a state
	 * older than one it has. A stream that starts before the latest clear starts at the clear: the state
	 * of events a clear removed is not for a reader who joins after it.
	 */
	private Mono<ServerSentEvent<String>> firstState(Session session, String reducer, long after) {
		return Mono.fromCallable(() -> {
			long clearedAt = this.server.eventStore().head(session.contract().name(), session.id()).clearedAt();
			return stateFrame(session.state(reducer, Math.max(after, clearedAt)));
		}).subscribeOn(this.scheduler);
	}

	private Mono<ServerSentEvent<String>> state(Session session, String reducer, long through) {
		return Mono.fromCallable(() -> stateFrame(session.state(reducer, through))).subscribeOn(this.scheduler);
	}

	private ServerSentEvent<String> stateFrame(SessionState<?> state) {
		return ServerSentEvent.<String>builder().event("state").data(this.wire.state(state.index(), state.state())).build();
	}

	/**
	 * A presence frame, with {@code now}, the server's clock as it is sent: a client stamps its writes'
	 * {@code at} on the server's clock from it, so a device whose clock is behind does not lose its writes.
	 */
	private ServerSentEvent<String> presenceFrame(PresenceUpdate update) {
		long now = this.server.clock().millis();
		Object data = (update instanceof PresenceUpdate.Snapshot snapshot) ? Map.of("snapshot", snapshot.snapshot(), "now", now)
				: Map.of("patches", ((PresenceUpdate.Patches) update).patches(), "now", now);
		return ServerSentEvent.<String>builder().event("presence").data(this.wire.value(data)).build();
	}

}
