package dev.a2;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Wraps every run of a consumer's code on this instance: to observe runs, or to inject faults in
 * tests (the test kit fails, crashes and stalls runs through it). An interceptor calls
 * {@link Invocation#proceed()} to run the code (or the next interceptor) and answers what it
 * returned; throwing fails the attempt as the consumer's own exception would.
 */
@FunctionalInterface
public interface RunInterceptor {

	@Nullable Object intercept(Invocation run) throws Exception;

	/** One run of a consumer's code. */
	interface Invocation {

		Consumer consumer();

		String session();

		/** The events of the run: one for a unit, consecutive events for a batch of a fixed lane. */
		List<Event> events();

		/** The event the run is for: the batch's last one for a batch. */
		default Event event() {
			List<Event> events = events();
			return events.get(events.size() - 1);
		}

		/** 1 on the first try; each new claim of the unit counts one more. */
		int attempt();

		/** How many times the unit failed before this attempt (since it was last redriven). */
		int failures();

		AbortSignal signal();

		/** Runs the consumer's code (or the next interceptor) and answers what it returned. */
		@Nullable Object proceed() throws Exception;

		/**
		 * Ends the attempt, once the run returns, as if its instance died: nothing the run returned is
		 * committed and its claim is kept until its lease lapses, when another attempt takes the unit
		 * over. What the run appended itself stays (its ids are derived, so the next attempt's appends
		 * are no-ops).
		 */
		void abandon();

	}

}
