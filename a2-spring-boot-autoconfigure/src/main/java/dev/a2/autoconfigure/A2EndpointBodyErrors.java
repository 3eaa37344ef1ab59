package dev.a2.autoconfigure;

import java.io.IOException;

import dev.a2.ErrorCode;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * A body of a write operation of the {@code a2} actuator endpoint that Boot's endpoint machinery could
 * not read answers 400 {@code INVALID_PAYLOAD} in A2's {@code {"error":{"code","message"}}} shape, as
 * the operation's other errors do. Boot binds such a body to a {@code Map<String, String>} before any
 * operation runs, whatever the operation declares, so one that is no JSON object ({@code hello},
 * {@code []}) or has a field that is no string or number ({@code "index":{}}) never reaches
 * {@link A2Endpoint}: without this, it would answer Boot's own error body. Only the requests Boot
 * mapped to the {@code a2} endpoint are answered; any other failure, or another endpoint's, or the
 * application's, is left to the handlers after.
 */
final class A2EndpointBodyErrors {

	static final String MESSAGE = "a redrive's body must be a JSON object {\"contract\",\"session\",\"consumer\",\"index\","
			+ "\"action\"} of strings (index may be a whole number)";

	private static final byte[] BODY = JsonMapper.shared()
		.writeValueAsBytes(A2Endpoint.errorBody(ErrorCode.INVALID_PAYLOAD.name(), MESSAGE));

	private final ObjectProvider<PathMappedEndpoints> endpoints;

	private A2EndpointBodyErrors(ObjectProvider<PathMappedEndpoints> endpoints) {
		this.endpoints = endpoints;
	}

	/**
	 * Whether the request was mapped to an operation of the {@code a2} endpoint: the pattern that
	 * matched it ({@code /actuator/a2/{redrive}}) is under the endpoint's path, wherever the
	 * application puts its actuator.
	 */
	private boolean mappedToTheEndpoint(@Nullable Object bestMatchingPattern) {
		PathMappedEndpoints mapped = this.endpoints.getIfAvailable();
		String path = (mapped != null) ? mapped.getPath(EndpointId.of("a2")) : null;
		return path != null && bestMatchingPattern != null && bestMatchingPattern.toString().startsWith(path + "/");
	}

	/** In a WebFlux application: before Boot's error handler ({@code -1}) would answer in its shape. */
	static final class Reactive implements WebExceptionHandler, Ordered {

		private final A2EndpointBodyErrors errors;

		Reactive(ObjectProvider<PathMappedEndpoints> endpoints) {
			this.errors = new A2EndpointBodyErrors(endpoints);
		}

		@Override
		public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
			ServerHttpResponse response = exchange.getResponse();
			// the operations' only input WebFlux reads and can fail on is the body
			if (!(ex instanceof ServerWebInputException) || response.isCommitted() || !this.errors.mappedToTheEndpoint(
					exchange.getAttribute(org.springframework.web.reactive.HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE))) {
				return Mono.error(ex);
			}
			response.setStatusCode(HttpStatus.BAD_REQUEST);
			response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
			return response.writeWith(Mono.just(response.bufferFactory().wrap(BODY)));
		}

		@Override
		public int getOrder() {
			return -2;
		}

	}

	/**
	 * In a Spring MVC application: before Spring MVC's own resolvers ({@code 0}), whose
	 * {@code DefaultHandlerExceptionResolver} would send Boot's error page.
	 */
	static final class Servlet implements HandlerExceptionResolver, Ordered {

		private final A2EndpointBodyErrors errors;

		Servlet(ObjectProvider<PathMappedEndpoints> endpoints) {
			this.errors = new A2EndpointBodyErrors(endpoints);
		}

		@Override
		public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
				@Nullable Object handler, Exception ex) {
			if (!(ex instanceof HttpMessageNotReadableException) || response.isCommitted() || !this.errors.mappedToTheEndpoint(
					request.getAttribute(org.springframework.web.servlet.HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE))) {
				return null;
			}
			try {
				response.setStatus(HttpStatus.BAD_REQUEST.value());
				response.setContentType(MediaType.APPLICATION_JSON_VALUE);
				response.getOutputStream().write(BODY);
			}
			catch (IOException failed) {
				return null;
			}
			return new ModelAndView();
		}

		@Override
		public int getOrder() {
			return -1;
		}

	}

}
