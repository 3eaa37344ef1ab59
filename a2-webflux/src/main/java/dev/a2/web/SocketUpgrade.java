package dev.a2.web;

import java.util.function.Supplier;

import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.WebsocketServerSpec;

import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.socket.HandshakeInfo;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.reactive.socket.server.RequestUpgradeStrategy;
import org.springframework.web.reactive.socket.server.upgrade.ReactorNettyRequestUpgradeStrategy;
import org.springframework.web.reactive.socket.server.upgrade.StandardWebSocketUpgradeStrategy;
import org.springframework.web.server.ServerWebExchange;

/**
 * Upgrades A2's socket on the server the request came in on, with A2's frame limit: Reactor Netty
 * (WebFlux's own server) with its strategy, a servlet container such as Tomcat with the standard
 * WebSocket API's. The server is read from each request, not guessed from the classpath, where
 * Reactor Netty is often present for {@code WebClient} beside another server.
 */
final class SocketUpgrade implements RequestUpgradeStrategy {

	private static final boolean REACTOR_NETTY = ClassUtils.isPresent("reactor.netty.http.server.HttpServerResponse",
			SocketUpgrade.class.getClassLoader());

	private final int maxFrameBytes;

	private final @Nullable RequestUpgradeStrategy netty;

	private volatile @Nullable RequestUpgradeStrategy standard;

	/** @param maxFrameBytes the largest frame read; a larger one closes the socket (1009) */
	SocketUpgrade(int maxFrameBytes) {
		this.maxFrameBytes = maxFrameBytes;
		this.netty = REACTOR_NETTY ? Netty.strategy(maxFrameBytes) : null;
	}

	@Override
	public Mono<Void> upgrade(ServerWebExchange exchange, WebSocketHandler handler, @Nullable String subProtocol,
			Supplier<HandshakeInfo> handshakeInfo) {
		RequestUpgradeStrategy netty = this.netty;
		if (netty != null && Netty.serves(exchange.getResponse())) {
			return Netty.onEventLoop(exchange.getResponse(),
					Mono.defer(() -> netty.upgrade(exchange, handler, subProtocol, handshakeInfo)));
		}
		return standard().upgrade(exchange, handler, subProtocol, handshakeInfo);
	}

	private RequestUpgradeStrategy standard() {
		RequestUpgradeStrategy standard = this.standard;
		if (standard == null) {
			// made on first use: it needs the servlet container's WebSocket API, absent on Netty
			standard = Standard.strategy(this.maxFrameBytes);
			this.standard = standard;
		}
		return standard;
	}

	/** The standard WebSocket API's strategy, for servlet containers. */
	private static final class Standard {

		static RequestUpgradeStrategy strategy(int maxFrameBytes) {
			StandardWebSocketUpgradeStrategy strategy = new StandardWebSocketUpgradeStrategy();
			strategy.setMaxTextMessageBufferSize(maxFrameBytes);
			strategy.setMaxBinaryMessageBufferSize(maxFrameBytes);
			return strategy;
		}

	}

	/** Reactor Netty's types, loaded only when it is present. */
	private static final class Netty {

		static RequestUpgradeStrategy strategy(int maxFrameBytes) {
			return new ReactorNettyRequestUpgradeStrategy(
					() -> WebsocketServerSpec.builder().maxFramePayloadLength(maxFrameBytes).handlePing(true));
		}

		static boolean serves(ServerHttpResponse response) {
			return ServerHttpResponseDecorator.getNativeResponse(response) instanceof HttpServerResponse;
		}

		/**
		 * The upgrade run on the connection's own event loop. Reactor Netty binds the socket's inbound
		 * side in a listener of the handshake's write; started from another thread (a filter before
		 * A2 that went off the loop, as Spring Security's password check does), that listener can be
		 * queued behind the read of the client's first frame, which is then dropped: a subscribe or
		 * push sent the moment the socket opened was never answered.
		 */
		static Mono<Void> onEventLoop(ServerHttpResponse response, Mono<Void> upgrade) {
			Object connection = ServerHttpResponseDecorator.getNativeResponse(response);
			if (!(connection instanceof Connection netty)) {
				return upgrade;
			}
			EventLoop loop = netty.channel().eventLoop();
			return Mono.defer(() -> loop.inEventLoop() ? upgrade : upgrade.subscribeOn(Schedulers.fromExecutor(loop)));
		}

	}

}
