package dev.a2.web;

import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.reactive.socket.server.WebSocketService;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebHandler;

/**
 * The WebSocket handshake of A2's socket: refuses (403) a browser page of another origin unless
 * {@code a2.web.allowed-origins} names it, so a foreign site cannot open a socket with the user's
 * cookies (cross-site WebSocket hijacking). Clients that send no {@code Origin} are not browsers.
 */
final class SocketHandshake implements WebHandler {

	private final WebSocketService service;

	private final WebSocketHandler handler;

	private final CorsConfiguration origins = new CorsConfiguration();

	SocketHandshake(WebSocketService service, WebSocketHandler handler, List<String> allowedOrigins) {
		this.service = service;
		this.handler = handler;
		this.origins.setAllowedOriginPatterns(allowedOrigins);
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange) {
		String origin = exchange.getRequest().getHeaders().getOrigin();
		if (origin != null && CorsUtils.isCorsRequest(exchange.getRequest()) && this.origins.checkOrigin(origin) == null) {
			exchange.getResponse().setStatusCode(HttpStatus.FORBIDDEN);
			return exchange.getResponse().setComplete();
		}
		return this.service.handleRequest(exchange, this.handler);
	}

}
