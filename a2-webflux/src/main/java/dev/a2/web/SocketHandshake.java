package dev.a2.web;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

import dev.a2.ErrorCode;
import dev.a2.wire.Wire;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.reactive.socket.server.WebSocketService;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebHandler;

/**
 * The WebSocket handshake of A2's socket: refuses (403) a browser page of another origin unless
 * {@code a2.web.allowed-origins} names it, so a foreign site cannot open a socket with the user's
 * cookies (cross-site WebSocket hijacking). Clients that send no {@code Origin} are not browsers.
 * A refusal, and a request that is no WebSocket handshake (a proxy that dropped {@code Upgrade}, a
 * plain {@code curl}: 400, another method than GET: 405), answers A2's error body like every other
 * route, not the server's default page.
 */
final class SocketHandshake implements WebHandler {

	private final WebSocketService service;

	private final WebSocketHandler handler;

	private final Wire wire;

	private final CorsConfiguration origins = new CorsConfiguration();

	SocketHandshake(WebSocketService service, WebSocketHandler handler, Wire wire, List<String> allowedOrigins) {
		this.service = service;
		this.handler = handler;
		this.wire = wire;
		this.origins.setAllowedOriginPatterns(allowedOrigins);
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange) {
		String origin = exchange.getRequest().getHeaders().getOrigin();
		if (origin != null && CorsUtils.isCorsRequest(exchange.getRequest()) && this.origins.checkOrigin(origin) == null) {
			return refuse(exchange, ErrorCode.FORBIDDEN, "a page of origin " + origin
					+ " may not open this socket; name the origin in a2.web.allowed-origins (A2WebSettings' allowedOrigins"
					+ " without Spring Boot) to let its pages in");
		}
		// the service answers a request it cannot upgrade with an error, which would reach Boot's error page
		return this.service.handleRequest(exchange, this.handler)
			.onErrorResume(ResponseStatusException.class, (ex) -> notAHandshake(exchange, ex));
	}

	private Mono<Void> notAHandshake(ServerWebExchange exchange, ResponseStatusException ex) {
		if (exchange.getResponse().isCommitted()) {
			return Mono.error(ex);
		}
		if (!HttpMethod.GET.equals(exchange.getRequest().getMethod())) {
			// a method the URL does not answer, as on every path of A2
			exchange.getResponse().getHeaders().setAllow(Set.of(HttpMethod.GET));
			return refuse(exchange, ErrorCode.METHOD_NOT_ALLOWED, exchange.getRequest().getPath().value()
					+ " is A2's WebSocket: it answers GET (a WebSocket handshake), not "
					+ exchange.getRequest().getMethod().name());
		}
		return refuse(exchange, ErrorCode.INVALID_PAYLOAD, exchange.getRequest().getPath().value()
				+ " is A2's WebSocket: open it with a GET and a WebSocket handshake (Upgrade: websocket); this request was "
				+ "not one (" + whyNot(exchange.getRequest().getHeaders(), ex) + ")");
	}

	/**
	 * What the request lacks, named without any header's value: the service's own reason lists every
	 * header of the request, its {@code Authorization} and {@code Cookie} among them, and a page's script
	 * could read an HttpOnly cookie from the answer.
	 */
	private static String whyNot(HttpHeaders headers, ResponseStatusException ex) {
		if (!"websocket".equalsIgnoreCase(headers.getUpgrade())) {
			return "it has no Upgrade: websocket header";
		}
		if (headers.getConnection().stream().noneMatch("upgrade"::equalsIgnoreCase)) {
			return "its Connection header does not name Upgrade";
		}
		if (headers.getFirst("Sec-WebSocket-Key") == null) {
			return "it has no Sec-WebSocket-Key header";
		}
		return "the server could not upgrade it: " + ex.getStatusCode().value();
	}

	private Mono<Void> refuse(ServerWebExchange exchange, ErrorCode code, String message) {
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatus.valueOf(code.httpStatus()));
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		byte[] body = this.wire.error(code, message).getBytes(StandardCharsets.UTF_8);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

}
