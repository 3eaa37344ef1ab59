package dev.a2.web;

import java.security.Principal;

import jakarta.servlet.http.HttpServletRequest;
import reactor.core.publisher.Mono;

import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Gives the exchange of {@link A2Servlet} the servlet request's principal: the adapter's exchange has
 * none of its own, and A2's routes ask the authorizer about the exchange's.
 */
final class ServletCaller implements WebFilter {

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		Object request = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
		Object caller = (request instanceof HttpServletRequest servlet) ? servlet.getAttribute(A2Servlet.CALLER) : null;
		if (!(caller instanceof Principal principal)) {
			return chain.filter(exchange);
		}
		return chain.filter(exchange.mutate().principal(Mono.just(principal)).build());
	}

}
