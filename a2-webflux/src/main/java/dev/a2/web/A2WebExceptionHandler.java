package dev.a2.web;

import dev.a2.A2Exception;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * An {@link A2Exception} that escapes an application's WebFlux handler (a functional route, or a
 * controller without advice) answers the status of its code with a problem body, before Boot's
 * default error handler would answer 500.
 */
public final class A2WebExceptionHandler implements WebExceptionHandler {

	private final JsonMapper mapper;

	/** Writes A2's error bodies with {@code mapper}. */
	public A2WebExceptionHandler(JsonMapper mapper) {
		this.mapper = mapper;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		A2Exception error = find(ex);
		ServerHttpResponse response = exchange.getResponse();
		if (error == null || response.isCommitted()) {
			return Mono.error(ex);
		}
		ProblemDetail problem = A2ExceptionHandling.problem(error);
		problem.setInstance(exchange.getRequest().getURI());
		response.setStatusCode(HttpStatus.valueOf(problem.getStatus()));
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		DataBuffer body = response.bufferFactory().wrap(this.mapper.writeValueAsBytes(problem));
		return response.writeWith(Mono.just(body));
	}

	private static A2Exception find(Throwable ex) {
		for (Throwable t = ex; t != null; t = t.getCause()) {
			if (t instanceof A2Exception a2) {
				return a2;
			}
		}
		return null;
	}

}
