package dev.a2.web;

import java.security.Principal;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.A2Exception;
import dev.a2.A2Observations;
import dev.a2.A2Server;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.PresenceWrite;
import dev.a2.Session;
import dev.a2.live.FeedItem;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.PresenceUpdate;
import dev.a2.live.SessionFeeds;
import dev.a2.wire.Wire;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;

import org.springframework.web.reactive.socket.CloseStatus;
import org.springframework.web.reactive.socket.WebSocketMessage;
import org.springframework.web.reactive.socket.WebSocketSession;

/**
 * One socket: reads frames one at a time, answers each (an error frame for a bad one, keeping the
 * socket open), and sends the frames of the sessions it follows. What it sends is bounded: session
 * frames are read from the feeds only as the socket takes them, and the next frame is read only while
 * fewer than {@value #PENDING_ANSWERS} answers wait for the socket, so a client that sends without
 * reading is not read from until it reads, and one that reads gets every answer however fast it sends.
 */
final class SocketConnection {

	/** Answers waiting for the socket before the next frame is read. */
	private static final int PENDING_ANSWERS = 256;

	/** The close of a socket whose caller's credentials expired (1008, policy violation): the client opens another. */
	static final CloseStatus CREDENTIALS_EXPIRED = new CloseStatus(1008, "the caller's credentials expired");

	/** The members of a push frame: a push body's, and a frame's own. */
	private static final Set<String> PUSH_FRAME_MEMBERS = framed(Wire.PUSH_MEMBERS);

	/** The members of a presence frame: a presence write's, and a frame's own. */
	private static final Set<String> PRESENCE_FRAME_MEMBERS = framed(PresenceWrites.MEMBERS);

	/** The members of a subscribe frame: a misspelt {@code after} would follow the session from its start. */
	private static final Set<String> SUBSCRIBE_FRAME_MEMBERS = framed(Set.of("after"));

	/** The members of an unsubscribe frame. */
	private static final Set<String> UNSUBSCRIBE_FRAME_MEMBERS = framed(Set.of());

	/** The members of a ping frame. */
	private static final Set<String> PING_FRAME_MEMBERS = Set.of("type", "ref");

	record Shared(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence, Access access,
			Scheduler scheduler, A2WebSettings settings, ObservationRegistry observations, LiveConnections connections) {
	}

	private final Shared shared;

	private final WebSocketSession socket;

	private final String contract;

	private final @Nullable Principal caller;

	/**
	 * The answers, emitted by the frames' handling one frame at a time, at most {@link #PENDING_ANSWERS}
	 * waiting ({@link #answer}). They waited in a queue of that size apart from the frames: a burst from a
	 * client that read (a thousand pings at once) filled it before the socket sent them, and the socket
	 * was closed (1008) with its input unread.
	 */
	private final Sinks.Many<String> answers = Sinks.many().unicast().onBackpressureBuffer();

	/** Answers emitted and not yet taken by the socket. */
	private final AtomicInteger pendingAnswers = new AtomicInteger();

	/** Completed when the socket takes an answer, while the reading of frames waits for room. */
	private final AtomicReference<Sinks.@Nullable Empty<Void>> room = new AtomicReference<>();

	private final Sinks.Many<Flux<String>> followed = Sinks.many().unicast().onBackpressureBuffer();

	/** Session id → what ends its subscription. */
	private final Map<String, Sinks.Empty<Void>> subscriptions = new ConcurrentHashMap<>();

	private volatile long lastSent = System.nanoTime();

	SocketConnection(Shared shared, WebSocketSession socket, String contract, @Nullable Principal caller) {
		this.shared = shared;
		this.socket = socket;
		this.contract = contract;
		this.caller = caller;
	}

	Mono<Void> run() {
		// whether the contract exists is told in answer to a frame, once the authorizer let the caller in
		Duration ping = this.shared.settings().ping();
		Flux<String> pings = Flux.interval(ping, ping)
			.onBackpressureDrop()
			.filter((tick) -> System.nanoTime() - this.lastSent >= ping.toNanos() / 2)
			.map((tick) -> "{\"type\":\"ping\"}");
		Flux<String> outbound = Flux.merge(1, this.answers.asFlux().doOnNext((frame) -> answerTaken()),
				this.followed.asFlux().flatMap((frames) -> frames, this.shared.settings().maxSubscriptionsPerSocket() + 1, 1),
				pings);
		// a frame's buffer is released once received: copy it before it waits its turn
		Mono<Void> input = this.socket.receive().map(Received::of).concatMap((frame) -> handle(frame).flatMap(this::answer), 1)
			.then();
		// when the application stops, what is queued is sent, then the socket closes as going away; when
		// the caller's credentials expire, it closes saying so, and the client opens another with its own
		AtomicReference<CloseStatus> closing = new AtomicReference<>(CloseStatus.GOING_AWAY);
		Mono<Void> expired = Mono.fromCallable(() -> Optional.ofNullable(this.shared.access().openFor(this.caller)))
			.subscribeOn(this.shared.scheduler())
			.flatMap((openFor) -> openFor.isPresent() ? Mono.delay(openFor.get()) : Mono.never())
			.doOnSuccess((tick) -> closing.set(CREDENTIALS_EXPIRED))
			.then();
		Mono<Void> output = this.socket.send(outbound.takeUntilOther(Mono.firstWithSignal(this.shared.connections().stopping(), expired))
			.doOnNext((frame) -> this.lastSent = System.nanoTime())
			.map(this.socket::textMessage)).then(Mono.defer(() -> this.socket.close(closing.get())));
		return Mono.firstWithSignal(input, output)
			.doOnSubscribe((subscription) -> this.shared.connections().sockets.incrementAndGet())
			.doFinally((signal) -> {
				this.shared.connections().sockets.decrementAndGet();
				this.subscriptions.values().forEach(Sinks.Empty::tryEmitEmpty);
			});
	}

	/** A frame as received: its type, and its bytes unless it is over the limit. */
	private record Received(WebSocketMessage.Type type, int size, byte[] bytes) {

		static Received of(WebSocketMessage message) {
			int size = message.getPayload().readableByteCount();
			byte[] bytes = new byte[size];
			message.getPayload().read(bytes);
			return new Received(message.getType(), size, bytes);
		}

	}

	/** The answer to a frame, if it has one. */
	private Mono<String> handle(Received message) {
		if (message.type() != WebSocketMessage.Type.TEXT) {
			if (message.type() == WebSocketMessage.Type.BINARY) {
				return Mono.just(this.shared.wire().errorFrame(null, null, ErrorCode.INVALID_PAYLOAD,
						"frames are JSON text; a binary frame was sent"));
			}
			return Mono.empty();
		}
		if (message.size() > this.shared.wire().limits().maxBytes()) {
			A2Exception tooLarge = this.shared.wire().tooLarge("the frame", message.size());
			return Mono.just(this.shared.wire().errorFrame(null, null, tooLarge.code(), String.valueOf(tooLarge.getMessage())));
		}
		byte[] bytes = message.bytes();
		JsonNode[] ref = { null };
		String[] session = { null };
		return Mono.defer(() -> {
			JsonNode frame = this.shared.wire().readObject(bytes, "the frame");
			ref[0] = frame.get("ref");
			session[0] = text(frame.get("session"));
			String type = Wire.requiredString(frame, "type", "");
			return switch (type) {
				case "subscribe" -> subscribe(frame);
				case "unsubscribe" -> unsubscribe(frame);
				case "push" -> push(frame, ref[0]);
				case "presence" -> presence(frame);
				case "ping" -> {
					Wire.onlyMembers(frame, "the ping frame", PING_FRAME_MEMBERS);
					yield Mono.just("{\"type\":\"pong\"}");
				}
				default -> Mono.<String>error(new A2Exception(ErrorCode.INVALID_PAYLOAD, "unknown frame type '" + type
						+ "'; expected subscribe, unsubscribe, push, presence or ping"));
			};
		}).onErrorResume((ex) -> {
			A2Exception error = WebErrors.asA2(ex, this.shared.wire());
			return Mono.just(this.shared.wire().errorFrame(ref[0], session[0], error.code(), String.valueOf(error.getMessage())));
		});
	}

	/** No answer of its own: {@code subscribed} is the first of the session's frames. */
	private Mono<String> subscribe(JsonNode frame) {
		Wire.onlyMembers(frame, "the subscribe frame", SUBSCRIBE_FRAME_MEMBERS);
		String id = sessionId(frame);
		JsonNode afterNode = frame.get("after");
		long after = 0;
		if (afterNode != null && !afterNode.isNull()) {
			if (!afterNode.canConvertToLong() || !afterNode.isIntegralNumber() || afterNode.asLong() < 0) {
				throw new A2Exception(ErrorCode.INVALID_PAYLOAD, "after must be a whole number of 0 or more");
			}
			after = afterNode.asLong();
		}
		if (this.subscriptions.containsKey(id)) {
			throw new A2Exception(ErrorCode.INVALID_PAYLOAD, "this socket already follows session '" + id
					+ "'; unsubscribe first to follow it from another index");
		}
		int most = this.shared.settings().maxSubscriptionsPerSocket();
		if (this.subscriptions.size() >= most) {
			throw new A2Exception(ErrorCode.INVALID_PAYLOAD,
					"this socket follows " + most + " sessions already, the most one socket may; use another socket");
		}
		long from = after;
		return onStore(() -> {
			Session session = this.shared.access().open(this.caller, A2Access.of(A2Permission.READ, this.contract, id));
			return this.shared.server().eventStore().head(this.contract, session.id()).lastIndex();
		}).doOnNext((head) -> follow(id, from, head)).then(Mono.empty());
	}

	private void follow(String id, long after, long head) {
		Sinks.Empty<Void> end = Sinks.empty();
		this.subscriptions.put(id, end);
		Wire wire = this.shared.wire();
		Flux<String> events = this.shared.feeds().events(this.contract, id, after).map((item) -> {
			if (item instanceof FeedItem.Events batch) {
				return wire.eventsFrame(id, batch.events());
			}
			if (item instanceof FeedItem.Failed failed) {
				// this subscription's error only: the socket and its other sessions go on, and so does this
				// one, from where it was, once the store can be read
				A2Exception error = WebErrors.asA2(failed.cause(), wire);
				return wire.errorFrame(null, id, error.code(), "session '" + id + "' could not be read: "
						+ error.getMessage() + ". The subscription stays and goes on where it was once it can be read");
			}
			long index = ((FeedItem.Cleared) item).index();
			return wire.frame("cleared", id, (json) -> json.writeNumberProperty("index", index));
		});
		// with now, the server's clock as the frame is sent: the client stamps its presence writes on it
		Flux<String> presence = this.shared.presence().presence(this.contract, id).map((update) -> {
			long now = this.shared.server().clock().millis();
			return wire.frame("presence", id, (json) -> {
				if (update instanceof PresenceUpdate.Snapshot snapshot) {
					json.writeName("snapshot");
					json.writePOJO(snapshot.snapshot());
				}
				else {
					json.writeName("patches");
					json.writePOJO(((PresenceUpdate.Patches) update).patches());
				}
				json.writeNumberProperty("now", now);
			});
		});
		Observation observation = Observation.createNotStarted(A2Observations.STREAM, this.shared.observations())
			.lowCardinalityKeyValue(A2Observations.CONTRACT, this.contract)
			.lowCardinalityKeyValue(A2Observations.TRANSPORT, "socket")
			.highCardinalityKeyValue(A2Observations.SESSION, id);
		// a caller the authorizer no longer lets read the session: its subscription ends, with an error frame
		// that says so; the socket and its other subscriptions go on
		AtomicReference<@Nullable String> refused = new AtomicReference<>();
		Mono<String> revoked = this.shared.access()
			.readRevoked(this.caller, this.contract, id, this.shared.scheduler())
			.map((refusal) -> {
				this.subscriptions.remove(id, end);
				String frame = wire.unsubscribedFrame(id, refusal.code(), refusal.getMessage() + "; the subscription ended");
				refused.set(frame);
				return frame;
			});
		String subscribed = wire.frame("subscribed", id, (json) -> json.writeNumberProperty("head", head));
		Flux<String> frames = Flux.concat(Mono.just(subscribed), Flux.merge(1, events, presence, revoked))
			.takeUntil((frame) -> frame == refused.get())
			.takeUntilOther(end.asMono())
			.doOnSubscribe((subscription) -> observation.start())
			.doFinally((signal) -> observation.stop());
		this.followed.tryEmitNext(frames);
	}

	private Mono<String> unsubscribe(JsonNode frame) {
		Wire.onlyMembers(frame, "the unsubscribe frame", UNSUBSCRIBE_FRAME_MEMBERS);
		String id = sessionId(frame);
		Sinks.Empty<Void> end = this.subscriptions.remove(id);
		if (end != null) {
			end.tryEmitEmpty();
		}
		return Mono.just(this.shared.wire().frame("unsubscribed", id, (json) -> {
		}));
	}

	private Mono<String> push(JsonNode frame, @Nullable JsonNode ref) {
		String id = sessionId(frame);
		Wire.onlyMembers(frame, "the push frame", PUSH_FRAME_MEMBERS);
		List<NewEvent> events = this.shared.wire().readEvents(frame);
		PresenceWrite presence = PresenceWrites.read(frame.get("presence"), this.caller, "presence.");
		return onStore(() -> {
			Session session = this.shared.access().open(this.caller, A2Access.push(this.contract, id, events, presence));
			List<Event> stored = Observation.createNotStarted(A2Observations.PUSH, this.shared.observations())
				.lowCardinalityKeyValue(A2Observations.CONTRACT, this.contract)
				.highCardinalityKeyValue(A2Observations.SESSION, session.id())
				.observe(() -> session.append(events, presence));
			return this.shared.wire().ackFrame(ref, stored);
		});
	}

	/** No answer unless refused: the write reaches every subscriber as a presence frame. */
	private Mono<String> presence(JsonNode frame) {
		String id = sessionId(frame);
		PresenceWrite write = PresenceWrites.read(frame, this.caller, "", "the presence frame", PRESENCE_FRAME_MEMBERS);
		return onStore(() -> {
			this.shared.access().open(this.caller, A2Access.presence(this.contract, id, write)).presence(write);
			return "";
		}).then(Mono.empty());
	}

	/** A body's members with those every frame has. */
	private static Set<String> framed(Set<String> members) {
		Set<String> framed = new HashSet<>(members);
		framed.addAll(List.of("type", "ref", "session"));
		return Set.copyOf(framed);
	}

	/** The session id of a frame, as sent: whether it and the contract exist is told once the caller is let in. */
	private static String sessionId(JsonNode frame) {
		return Wire.requiredString(frame, "session", "");
	}

	private <T> Mono<T> onStore(java.util.concurrent.Callable<T> work) {
		return Mono.fromCallable(work).subscribeOn(this.shared.scheduler());
	}

	/**
	 * Queues an answer for the socket; completes when the next frame may be read: at once while fewer than
	 * {@link #PENDING_ANSWERS} wait, else once the socket took one. Called for one frame at a time.
	 */
	private Mono<Void> answer(String frame) {
		this.pendingAnswers.incrementAndGet();
		this.answers.tryEmitNext(frame);
		if (this.pendingAnswers.get() < PENDING_ANSWERS) {
			return Mono.empty();
		}
		Sinks.Empty<Void> taken = Sinks.empty();
		this.room.set(taken);
		// the socket may have taken answers before the waiter was set, and found none to tell
		if (this.pendingAnswers.get() < PENDING_ANSWERS && this.room.compareAndSet(taken, null)) {
			return Mono.empty();
		}
		return taken.asMono();
	}

	/** The socket took an answer: a reading of frames waiting for room goes on. */
	private void answerTaken() {
		this.pendingAnswers.decrementAndGet();
		Sinks.Empty<Void> waiting = this.room.getAndSet(null);
		if (waiting != null) {
			waiting.tryEmitEmpty();
		}
	}

	private static @Nullable String text(@Nullable JsonNode node) {
		if (node == null || node.isNull()) {
			return null;
		}
		return node.isString() ? node.asString() : node.toString();
	}

}
