package dev.a2.web;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.stream.Collectors;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.wire.Wire;
import dev.a2.wire.WireLimits;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.resource.ResourceWebHandler;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * An {@link A2Exception} that escapes an application's WebFlux handler (a functional route, or a
 * controller without advice) answers the status of its code with a problem body, before Boot's
 * default error handler would answer 500.
 * <p>
 * Given A2's base path, it also answers a request under it that no handler took in A2's error shape,
 * as A2's routes answer: 405 {@code METHOD_NOT_ALLOWED} with an {@code Allow} header for a path of A2
 * asked with another method, 404 {@code NOT_FOUND} for any other path. A route of the application's
 * own under the base path still takes its requests; paths outside it are left to the application. An
 * {@link A2Exception} under the base path (a stream that could not read its session before its first
 * frame) is answered in A2's error shape too.
 */
public final class A2WebExceptionHandler implements WebExceptionHandler, Ordered {

	/**
	 * Before WebFlux's own handler ({@code WebFluxResponseStatusExceptionHandler}, order 0), which answers a
	 * request no handler took with an empty 404: registered without an order of its own (as an application
	 * without Spring Boot registers it), this one was never asked, and A2's 404 and 405 were empty 404s.
	 */
	public static final int ORDER = -2;

	private final JsonMapper mapper;

	private final @Nullable String basePath;

	private final Wire wire;

	/** Writes A2's error bodies with {@code mapper}; requests no handler took are left to the application. */
	public A2WebExceptionHandler(JsonMapper mapper) {
		this(mapper, null);
	}

	/**
	 * Writes A2's error bodies with {@code mapper}, and answers the requests under {@code basePath}
	 * ({@code a2.web.base-path}) that no handler took.
	 */
	public A2WebExceptionHandler(JsonMapper mapper, @Nullable String basePath) {
		this.mapper = mapper;
		this.basePath = (basePath != null && basePath.endsWith("/")) ? basePath.substring(0, basePath.length() - 1)
				: basePath;
		this.wire = new Wire(mapper, WireLimits.DEFAULTS);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		ServerHttpResponse response = exchange.getResponse();
		if (this.basePath != null && !response.isCommitted() && noHandlerTook(exchange, ex)) {
			Mono<Void> answered = unmatched(exchange, this.basePath);
			if (answered != null) {
				return answered;
			}
		}
		A2Exception error = find(ex);
		if (error == null || response.isCommitted()) {
			return Mono.error(ex);
		}
		if (this.basePath != null && underBasePath(exchange, this.basePath)) {
			// one of A2's routes whose answer failed before it began (a stream that could not read its
			// session): in A2's error shape, as its routes answer
			return answer(exchange, error.code(), String.valueOf(error.getMessage()));
		}
		ProblemDetail problem = A2ExceptionHandling.problem(error);
		problem.setInstance(exchange.getRequest().getURI());
		response.setStatusCode(HttpStatus.valueOf(problem.getStatus()));
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		DataBuffer body = response.bufferFactory().wrap(this.mapper.writeValueAsBytes(problem));
		return response.writeWith(Mono.just(body));
	}

	/**
	 * Whether the failure is WebFlux's 404 for a request no handler took: none matched it, or only the
	 * static resources' handler (Boot's, at {@code /**}), which found no file. A 404 of an application's
	 * handler is its own answer.
	 */
	private static boolean noHandlerTook(ServerWebExchange exchange, Throwable ex) {
		if (!(ex instanceof ResponseStatusException status) || status.getStatusCode().value() != 404) {
			return false;
		}
		Object handler = exchange.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
		return handler == null || handler instanceof ResourceWebHandler;
	}

	/** A2's answer to a request no handler took, or {@code null} when its path is not A2's. */
	private @Nullable Mono<Void> unmatched(ServerWebExchange exchange, String basePath) {
		PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
		// the messages name the paths as the caller sent them, with the application's context path
		String asSent = exchange.getRequest().getPath().value();
		String routes = exchange.getRequest().getPath().contextPath().value() + basePath;
		HttpMethod method = exchange.getRequest().getMethod();
		List<HttpMethod> allowed = A2Routes.methodsAt(basePath, path);
		if (allowed != null) {
			String methods = allowed.stream().map(HttpMethod::name).collect(Collectors.joining(", "));
			exchange.getResponse().getHeaders().setAllow(new LinkedHashSet<>(allowed));
			return answer(exchange, ErrorCode.METHOD_NOT_ALLOWED, asSent + " does not answer " + method.name()
					+ "; it answers " + methods);
		}
		// a base path of "" puts A2 at the root, beside the application's own paths: those keep their 404
		if (underBasePath(exchange, basePath)) {
			return answer(exchange, ErrorCode.NOT_FOUND, "A2 has no endpoint at " + asSent + ": its routes are "
					+ routes + "/{contract}/sessions/{session}/events, …/stream, …/state/{reducer}, …/presence, "
					+ routes + "/{contract}/sessions/{session} and " + routes + "/{contract}/socket");
		}
		return null;
	}

	/** Whether the request is for a path under A2's base path (never with a base path of "", the root). */
	private static boolean underBasePath(ServerWebExchange exchange, String basePath) {
		String path = exchange.getRequest().getPath().pathWithinApplication().value();
		return !basePath.isEmpty() && (path.equals(basePath) || path.startsWith(basePath + "/"));
	}

	/**
	 * Answers after reading what the request sent, as far as the routes do for a refused
	 * request: Reactor Netty would not read the next request of a keep-alive connection otherwise
	 * (reactor/reactor-netty#4361).
	 */
	private Mono<Void> answer(ServerWebExchange exchange, ErrorCode code, String message) {
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatus.valueOf(code.httpStatus()));
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		byte[] body = this.wire.error(code, message).getBytes(StandardCharsets.UTF_8);
		Mono<Void> unread = A2Routes.unreadBodyDiscarded(exchange, this.wire.limits().maxBytes());
		return unread.then(response.writeWith(Mono.just(response.bufferFactory().wrap(body))));
	}

	private static @Nullable A2Exception find(Throwable ex) {
		for (Throwable t = ex; t != null; t = t.getCause()) {
			if (t instanceof A2Exception a2) {
				return a2;
			}
		}
		return null;
	}

}
