package dev.a2.web;

import java.security.Principal;

import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import jakarta.servlet.http.HttpServletRequest;
import reactor.core.publisher.Mono;

import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Gives the exchange of {@link A2Servlet} the servlet request's principal, which A2's routes ask the
 * authorizer about (the adapter's exchange has none of its own), and the servlet request's observation,
 * which they take for their parent as on WebFlux (the adapter puts a no-op one of its own in Reactor's
 * context).
 */
final class ServletCaller implements WebFilter {

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		Object request = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
		if (!(request instanceof HttpServletRequest servlet)) {
			return chain.filter(exchange);
		}
		ServerWebExchange called = (servlet.getAttribute(A2Servlet.CALLER) instanceof Principal principal)
				? exchange.mutate().principal(Mono.just(principal)).build() : exchange;
		if (!(servlet.getAttribute(A2Servlet.OBSERVATION) instanceof Observation observation)) {
			return chain.filter(called);
		}
		return chain.filter(called).contextWrite((context) -> context.put(ObservationThreadLocalAccessor.KEY, observation));
	}

}
