package dev.a2.web;

import java.util.concurrent.Callable;

import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.jspecify.annotations.Nullable;
import reactor.util.context.ContextView;

/**
 * The observation of the HTTP request A2's route serves ({@code http.server.requests}), which WebFlux
 * keeps in Reactor's context, not on a thread. A2's routes do their work on store threads: opened there,
 * it is the parent of what the work observes ({@code a2.push}, {@code a2.append}), and a tracer puts the
 * request's trace in the work's logs.
 */
final class RequestObservation {

	private RequestObservation() {
	}

	/**
	 * The request's observation, or {@code null} when the server observes no requests (WebFlux then
	 * keeps a no-op one, which would hide the thread's own from A2's observations).
	 */
	static @Nullable Observation of(ContextView context) {
		Observation observation = context.getOrDefault(ObservationThreadLocalAccessor.KEY, null);
		return (observation == null || observation.isNoop()) ? null : observation;
	}

	/** Runs {@code work} with {@code observation} open on this thread, when there is one. */
	static <T> T within(@Nullable Observation observation, Callable<T> work) throws Exception {
		if (observation == null) {
			return work.call();
		}
		try (Observation.Scope scope = observation.openScope()) {
			return work.call();
		}
	}

}
