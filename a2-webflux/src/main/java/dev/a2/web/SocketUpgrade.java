package dev.a2.web;

import java.util.function.Supplier;

import io.netty.channel.EventLoop;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.ee11.websocket.server.JettyWebSocketServerContainer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.WebsocketServerSpec;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.socket.HandshakeInfo;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.reactive.socket.server.RequestUpgradeStrategy;
import org.springframework.web.reactive.socket.server.upgrade.JettyRequestUpgradeStrategy;
import org.springframework.web.reactive.socket.server.upgrade.ReactorNettyRequestUpgradeStrategy;
import org.springframework.web.reactive.socket.server.upgrade.StandardWebSocketUpgradeStrategy;
import org.springframework.web.server.ServerWebExchange;

/**
 * Upgrades A2's socket on the server the request came in on, with A2's frame limit: Reactor Netty
 * (WebFlux's own server) with its strategy, Jetty's servlet container with Jetty's own WebSocket API,
 * another servlet container such as Tomcat with the standard WebSocket API's. The server is read from
 * each request, not guessed from the classpath, where Reactor Netty is often present for
 * {@code WebClient} beside another server.
 */
final class SocketUpgrade implements RequestUpgradeStrategy {

	private static final boolean REACTOR_NETTY = ClassUtils.isPresent("reactor.netty.http.server.HttpServerResponse",
			SocketUpgrade.class.getClassLoader());

	private static final boolean JETTY = ClassUtils.isPresent(
			"org.eclipse.jetty.ee11.websocket.server.JettyWebSocketServerContainer", SocketUpgrade.class.getClassLoader());

	private final int maxFrameBytes;

	private final @Nullable RequestUpgradeStrategy netty;

	private volatile @Nullable RequestUpgradeStrategy standard;

	private volatile @Nullable RequestUpgradeStrategy jetty;

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
		if (JETTY && Jetty.serves(exchange.getRequest())) {
			return jetty().upgrade(exchange, handler, subProtocol, handshakeInfo);
		}
		return standard().upgrade(exchange, handler, subProtocol, handshakeInfo);
	}

	private RequestUpgradeStrategy jetty() {
		RequestUpgradeStrategy jetty = this.jetty;
		if (jetty == null) {
			jetty = Jetty.strategy(this.maxFrameBytes);
			this.jetty = jetty;
		}
		return jetty;
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

	/**
	 * Jetty's own WebSocket API, for Jetty's servlet container (a Spring MVC application on Jetty), loaded
	 * only when it is present. The standard API's strategy does not serve there: since Spring Framework 7
	 * its session is Tomcat's, which pauses reading through Tomcat's own session type ({@code WsSession}),
	 * and on Jetty the socket closed (1011) as soon as frames came faster than A2 took them, as a client's
	 * first frames do. Jetty's limits are set to A2's: its defaults (64 KiB a frame and a message) would
	 * close the socket on a push A2 takes.
	 */
	private static final class Jetty {

		static boolean serves(ServerHttpRequest request) {
			return ServerHttpRequestDecorator.getNativeRequest(request) instanceof HttpServletRequest servlet
					&& JettyWebSocketServerContainer.getContainer(servlet.getServletContext()) != null;
		}

		static RequestUpgradeStrategy strategy(int maxFrameBytes) {
			JettyRequestUpgradeStrategy strategy = new JettyRequestUpgradeStrategy();
			strategy.addWebSocketConfigurer((socket) -> {
				socket.setMaxFrameSize(maxFrameBytes);
				socket.setMaxTextMessageSize(maxFrameBytes);
				socket.setMaxBinaryMessageSize(maxFrameBytes);
			});
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
