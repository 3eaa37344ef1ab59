package dev.a2.web;

import java.net.URI;
import java.nio.charset.StandardCharsets;
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
import org.springframework.web.util.UriUtils;

/**
 * The WebSocket of a contract, {@code <base>/{contract}/socket}: one socket follows many sessions
 * and pushes to them, with the frames of §10.
 */
public final class A2SocketHandler implements WebSocketHandler {

	private final SocketConnection.Shared shared;

	/** The socket over a server, with the parts {@link A2Endpoints} and the auto-configuration share. */
	public A2SocketHandler(A2Server server, Wire wire, SessionFeeds feeds, PresenceFeeds presence, A2Authorizer authorizer,
			Scheduler scheduler, A2WebSettings settings, ObservationRegistry observations, LiveConnections connections) {
		this.shared = new SocketConnection.Shared(server, wire, feeds, presence, new Access(server, authorizer, settings), scheduler, settings,
				observations, connections);
	}

	/** How the socket writes JSON, for the handshake's refusals. */
	Wire wire() {
		return this.shared.wire();
	}

	@Override
	public Mono<Void> handle(WebSocketSession socket) {
		String contract = contract(socket.getHandshakeInfo().getUri());
		return socket.getHandshakeInfo()
			.getPrincipal()
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((caller) -> new SocketConnection(this.shared, socket, contract, Access.caller(caller.orElse(null))).run());
	}

	/**
	 * The contract a socket's URL names: its segment before {@code /socket}, percent-decoded as the
	 * routes decode theirs. Counted from the end, as the URL also holds the path the application is
	 * mounted under ({@code spring.webflux.base-path}), which the base path of A2 does not include.
	 */
	static String contract(URI uri) {
		String path = uri.getRawPath();
		String rest = path.endsWith("/socket") ? path.substring(0, path.length() - "/socket".length()) : path;
		String segment = rest.substring(rest.lastIndexOf('/') + 1);
		try {
			return UriUtils.decode(segment, StandardCharsets.UTF_8);
		}
		catch (IllegalArgumentException ex) {
			// a malformed escape: no contract has such a name, and the first frame is told so
			return segment;
		}
	}

}
