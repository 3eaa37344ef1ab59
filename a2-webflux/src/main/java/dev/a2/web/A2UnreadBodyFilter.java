package dev.a2.web;

import java.util.concurrent.atomic.AtomicBoolean;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Reads what is left of a request's body before its answer is written, when nothing read it: for a
 * request under A2's base path that a filter in front of A2 refuses unread (Spring Security's CSRF
 * check, its missing credentials). Reactor Netty 1.3 stops reading a keep-alive connection whose
 * next request arrived while such a body was unread (reactor/reactor-netty#4361), so a page whose
 * push was refused had its next request on that connection hang. A2's own refusals read the body
 * already ({@link A2Routes}, {@link A2WebExceptionHandler}); this filter covers the filters before
 * them. It runs before Spring Security's ({@link #ORDER}).
 * <p>
 * Up to {@code maxBytes} (the most a push may send), and at least 2 MiB, are read and dropped
 * ({@link A2Routes#unreadBodyBound(long)}); a longer body is not read to its end. A request without a
 * body (the stream, the socket's handshake, a read) is passed on as it is.
 */
public final class A2UnreadBodyFilter implements WebFilter, Ordered {

	/** Before Spring Security's filter chain (-100), so its refusals are written through this filter. */
	public static final int ORDER = -200;

	private final String basePath;

	private final long maxBytes;

	/** Covers the requests under {@code basePath}; reads up to {@code maxBytes} of an unread body. */
	public A2UnreadBodyFilter(String basePath, long maxBytes) {
		this.basePath = basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
		this.maxBytes = maxBytes;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ServerHttpRequest request = exchange.getRequest();
		if (!hasBody(request) || !underBasePath(request.getPath().pathWithinApplication().value())) {
			return chain.filter(exchange);
		}
		AtomicBoolean read = new AtomicBoolean();
		ServerHttpRequest watched = new ServerHttpRequestDecorator(request) {

			@Override
			public Flux<DataBuffer> getBody() {
				read.set(true);
				return super.getBody();
			}

		};
		Mono<Void> drain = Mono.defer(() -> read.getAndSet(true) ? Mono.empty()
				: A2Routes.unreadBodyDiscarded(request.getBody(), this.maxBytes));
		ServerHttpResponse drained = new ServerHttpResponseDecorator(exchange.getResponse()) {

			@Override
			public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
				return drain.then(super.writeWith(body));
			}

			@Override
			public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
				return drain.then(super.writeAndFlushWith(body));
			}

			@Override
			public Mono<Void> setComplete() {
				return drain.then(super.setComplete());
			}

		};
		return chain.filter(exchange.mutate().request(watched).response(drained).build());
	}

	static boolean hasBody(ServerHttpRequest request) {
		return request.getHeaders().getContentLength() > 0 || request.getHeaders().containsHeader("Transfer-Encoding");
	}

	private boolean underBasePath(String path) {
		return this.basePath.isEmpty() || path.equals(this.basePath) || path.startsWith(this.basePath + "/");
	}

}
