package dev.a2.web;

import java.util.Optional;

import dev.a2.A2Server;
import dev.a2.live.PresenceFeeds;
import dev.a2.live.SessionFeeds;
import dev.a2.wire.Wire;
import io.micrometer.observation.ObservationRegistry;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.reactive.socket.WebSocketSession;

/**
 * The WebSocket of a contract, {@code <base>/{contract}/socket}: one socket follows many sessions
 * and pushes to them, with the frames of §10.
 */
public final class A2SocketHandler implements WebSocketHandler {

	private final SocketConnection.Shared shared;

	/** The socket over a server, with the parts {@link A2Endpoints} and the auto-configuration share. */
	public A2SocketHandler(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence, A2Authorizer authorizer,
			Scheduler scheduler, A2WebSettings settings, ObservationRegistry observations, LiveConnections connections) {
		this.shared = new SocketConnection.Shared(server, wire, feeds, presence, new Access(server, authorizer, settings.presenceParticipant()), scheduler, settings,
				observations, connections);
	}

	@Override
	public Mono<Void> handle(WebSocketSession socket) {
		String path = socket.getHandshakeInfo().getUri().getPath();
		String prefix = this.shared.settings().basePath() + "/";
		String contract = path.substring(prefix.length(), path.length() - "/socket".length());
		return socket.getHandshakeInfo()
			.getPrincipal()
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((caller) -> new SocketConnection(this.shared, socket, contract, caller.orElse(null)).run());
	}

}
