package dev.a2.web;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServletHttpHandlerAdapter;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;
import org.springframework.web.server.WebHandler;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * A2's endpoints as a servlet of their own, for a servlet (Spring MVC) application, which does not
 * serve WebFlux routes: the routes, the SSE streams, the socket and A2's answers to paths and methods
 * it has no route for run as in a WebFlux application, through Spring's reactive adapter over the
 * servlet API (asynchronous requests, non-blocking reads and writes). Register it at
 * {@code {basePath}/*} with asynchronous requests supported; the starter does, as {@code a2Servlet}.
 * <p>
 * The caller is the servlet request's principal ({@link HttpServletRequest#getUserPrincipal()}, which
 * Spring Security's servlet filter chain sets), as a WebFlux exchange's is on WebFlux. The servlet
 * container's filters, Spring Security's among them, run before it as before the application's own
 * servlets.
 */
public final class A2Servlet extends ServletHttpHandlerAdapter {

	/** The servlet request's principal, read on the container's thread, where Spring Security has it. */
	static final String CALLER = A2Servlet.class.getName() + ".caller";

	/**
	 * The observation open on the container's thread as the request reaches the servlet (Spring MVC's
	 * {@code http.server.requests}, opened by its filter): the parent of what A2's routes observe on
	 * threads of their own.
	 */
	static final String OBSERVATION = A2Servlet.class.getName() + ".observation";

	private final ServletWrites writes;

	private final ObservationRegistry observations;

	/** Serves pushes on the container's thread; {@code null}: they go through the routes too. */
	private final @Nullable ServletPush push;

	/**
	 * The servlet over A2's parts: the same beans a WebFlux application registers
	 * ({@link A2Endpoints#routerFunction()}, {@link A2Endpoints#socketMapping()},
	 * {@link A2Endpoints#exceptionHandler()}).
	 */
	public A2Servlet(RouterFunction<ServerResponse> routes, SimpleUrlHandlerMapping socketMapping,
			A2WebExceptionHandler exceptionHandler) {
		this(routes, socketMapping, exceptionHandler, ObservationRegistry.NOOP);
	}

	/**
	 * The servlet over A2's parts, its pushes, appends and streams observed as children of the
	 * request's observation that {@code observations} has open when the request reaches the servlet
	 * (the observations themselves are made by the registry given to {@link A2Endpoints}).
	 */
	public A2Servlet(RouterFunction<ServerResponse> routes, SimpleUrlHandlerMapping socketMapping,
			A2WebExceptionHandler exceptionHandler, ObservationRegistry observations) {
		this(routes, null, socketMapping, exceptionHandler, observations, new ServletWrites());
	}

	/**
	 * The servlet over A2's routes, which serves a push on the container's thread, from the body to the
	 * answer, as a Spring MVC controller would: a push is the request a busy application serves most, and
	 * the reactive adapter's asynchronous request and hand-offs between threads cost it more CPU than its
	 * own work (on Tomcat 0.46 ms of the JVM's CPU per push in all, against 0.17–0.19 served on the
	 * container's thread). Every other request goes through the adapter as above.
	 */
	public A2Servlet(A2Routes routes, SimpleUrlHandlerMapping socketMapping, A2WebExceptionHandler exceptionHandler,
			ObservationRegistry observations) {
		this(routes.routes(), routes.servletPush(), socketMapping, exceptionHandler, observations, new ServletWrites());
	}

	private A2Servlet(RouterFunction<ServerResponse> routes, @Nullable ServletPush push,
			SimpleUrlHandlerMapping socketMapping, A2WebExceptionHandler exceptionHandler,
			ObservationRegistry observations, ServletWrites writes) {
		super(WebHttpHandlerBuilder.webHandler(handler(routes, socketMapping))
			.filter(new ServletCaller())
			.exceptionHandler(exceptionHandler)
			.httpHandlerDecorator((handler) -> inApplicationContext(handler, writes))
			.build());
		this.writes = writes;
		this.observations = observations;
		this.push = push;
	}

	/** The socket's handshake at its paths, the routes at every other. */
	private static WebHandler handler(RouterFunction<ServerResponse> routes, SimpleUrlHandlerMapping socketMapping) {
		WebHandler routing = RouterFunctions.toWebHandler(routes);
		List<Map.Entry<PathPattern, WebHandler>> sockets = socketMapping.getUrlMap()
			.entrySet()
			.stream()
			.filter((entry) -> entry.getValue() instanceof WebHandler)
			.map((entry) -> Map.entry(PathPatternParser.defaultInstance.parse(entry.getKey()), (WebHandler) entry.getValue()))
			.toList();
		return (exchange) -> {
			PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
			for (Map.Entry<PathPattern, WebHandler> socket : sockets) {
				if (socket.getKey().matches(path)) {
					return socket.getValue().handle(exchange);
				}
			}
			return routing.handle(exchange);
		};
	}

	/**
	 * Reads the caller and the request's observation on the container's thread, where Spring Security's
	 * request wrapper and Spring MVC's observation filter leave them: the routes run on other threads.
	 */
	@Override
	public void service(ServletRequest request, ServletResponse response) throws ServletException, IOException {
		if (request instanceof HttpServletRequest http && http.getDispatcherType() == DispatcherType.REQUEST) {
			if (this.push != null && response instanceof HttpServletResponse answer && this.push.serve(http, answer)) {
				return;
			}
			request.setAttribute(CALLER, http.getUserPrincipal());
			Observation observation = this.observations.getCurrentObservation();
			if (observation != null && !observation.isNoop()) {
				request.setAttribute(OBSERVATION, observation);
			}
		}
		super.service(request, response);
	}

	/** Stops the threads that write the responses. */
	@Override
	public void destroy() {
		super.destroy();
		this.writes.close();
	}

	/**
	 * The request with the base path in its path within the application, where A2's routes match it as
	 * on WebFlux: the adapter takes the servlet's path ({@code /a2}) for part of the context. The
	 * response is written off A2's store threads ({@link ServletWrites}), once the filters in front have
 * returned ({@link A2ServletGate}).
	 */
	private static HttpHandler inApplicationContext(HttpHandler handler, ServletWrites writes) {
		return (request, response) -> {
			Object servlet = ServerHttpRequestDecorator.getNativeRequest(request);
			if (!(servlet instanceof HttpServletRequest http)) {
				return handler.handle(request, writes.decorate(response, null, null));
			}
			@SuppressWarnings("unchecked")
			CompletableFuture<Void> returned = (CompletableFuture<Void>) http.getAttribute(A2ServletGate.RETURNED);
			return handler.handle(request.mutate().contextPath(http.getContextPath()).build(),
					writes.decorate(response, returned, http.isAsyncStarted() ? http.getAsyncContext() : null));
		};
	}

}
