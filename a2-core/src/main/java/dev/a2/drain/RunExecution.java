package dev.a2.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.a2.A2Exception;
import dev.a2.A2Observations;
import dev.a2.Cause;
import dev.a2.Consumer;
import dev.a2.DrainSettings;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.NonRetriableException;
import dev.a2.store.Claim;
import dev.a2.store.EventStore;
import dev.a2.store.EventToStore;
import dev.a2.store.Finish;
import dev.a2.store.StorableText;
import dev.a2.store.StoredEvent;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Runs a claim's events in order (one for a unit, a run of them for a cursor) and decides how the
 * attempt ended: the events that completed commit with their returned events, and a failure stops
 * the run at its event.
 */
final class RunExecution {

	private static final Log logger = LogFactory.getLog(Drainer.class);

	private final DrainHost host;

	private final DrainSettings settings;

	private final Leases leases;

	RunExecution(DrainHost host, DrainSettings settings, Leases leases) {
		this.host = host;
		this.settings = settings;
		this.leases = leases;
	}

	/** How the attempt ended; {@code null} when nothing is to be written (it was superseded or stopped). */
	@Nullable Finish execute(Running run) {
		Claim claim = run.claim;
		Consumer consumer = run.consumer;
		Finish finish = null;
		this.host.bind(run.signal, Thread.currentThread());
		try {
			// a consumer with abortOn takes its events one at a time: each one's start is decided on its own
			if (consumer.batchHandler() != null && consumer.abortOn().isEmpty() && claim.cursor() && claim.events().size() > 1
					&& claim.events().stream().allMatch((stored) -> consumer.takes(stored.type()))) {
				Finish batch = executeBatch(run, consumer);
				if (batch != null || run.signal.isAborted()) {
					return batch;
				}
				// the batch failed: its events run one at a time, so that the one that fails is found
			}
			List<EventToStore> returned = new ArrayList<>();
			long through = claim.cursor() ? claim.position() : claim.index() - 1;
			for (StoredEvent stored : claim.events()) {
				if (!consumer.takes(stored.type())) {
					// work an earlier deployment of the consumer created, for a type it no longer takes: done, not run
					through = stored.index();
					finish = Finish.completed(claim, returned, through);
					continue;
				}
				Event event;
				try {
					event = this.host.decode(claim.contract(), stored);
				}
				catch (RuntimeException ex) {
					// a stored payload this deployment's type cannot read (a poison event) fails at its own
					// index: a cursor keeps the events before it, and its dead letter names this one
					finish = failed(run, consumer, ex, returned, through, stored.index());
					break;
				}
				Leases.AbortBeforeStart abort = this.leases.abortedBeforeStart(run, event);
				if (abort != null && !abort.begun()) {
					notStarted(run, consumer, event, abort.aborting());
					through = event.index();
					finish = Finish.completed(claim, returned, through);
					continue;
				}
				if (abort != null) {
					// an earlier attempt began and its instance died (or let go) before the abort event came: not
					// running at all would leave what it began without an end (a reply streaming for ever), so the
					// code runs as if aborted at its start, and what it returns commits with the abort
					this.leases.abortAtStart(run, abort.aborting());
					// the signal tells the code, which has not begun: the interrupt the abort left on this thread
					// would only fail the code's first call to the store (the end event it appends)
					Thread.interrupted();
				}
				// past the head an event runs as its first try: a reply is not told it restarted for an event never tried
				boolean firstTry = pastHead(claim, through);
				int attempt = firstTry ? 1 : claim.attempt();
				Cause cause = new Cause(consumer.name(), laneOf(consumer, claim), event.index(), attempt);
				Observation observation = eventObservation(run, consumer, event).start();
				// open while the consumer's code runs: its logs carry the run's trace, and what it observes
				// (an append, a model call) is a child of the run
				try (Observation.Scope scope = observation.openScope()) {
					returned.addAll(this.host.run(consumer, claim.session(), event, attempt, firstTry ? 0 : claim.failures(),
							run.signal, cause));
				}
				catch (Throwable ex) {
					if (!run.signal.isAborted()) {
						finish = failed(run, consumer, ex, returned, through, event.index());
						observation.error(ex);
						observation.lowCardinalityKeyValue(A2Observations.OUTCOME, finish.dead() ? "dead_lettered" : "failed");
						observation.stop();
						break;
					}
				}
				if (run.signal.isAborted()) {
					aborted(run, consumer, event, observation);
					observation.stop();
					// what the run returned on its abort (an end event of its own) commits with the abort
					finish = abortedThrough(run, returned, event);
					break;
				}
				observation.lowCardinalityKeyValue(A2Observations.OUTCOME, "completed");
				observation.stop();
				// an abort event from now on is for the next event's start to decide
				run.current = null;
				through = event.index();
				finish = Finish.completed(claim, returned, through);
			}
		}
		catch (RuntimeException | Error ex) {
			// an Error too (from an abort condition, say): a run left without a finish would hold its unit for
			// ever, its lease renewed by every heartbeat
			finish = run.signal.isAborted() ? null
					: failed(run, consumer, ex, List.of(), claim.cursor() ? claim.position() : claim.index(), claim.index());
		}
		finally {
			this.host.bind(run.signal, null);
			Thread.interrupted();
		}
		return finish;
	}

	/**
	 * Runs a claim's events as one batch; answers how it ended, or {@code null} when it failed (and the
	 * caller runs the events one at a time) or was aborted (nothing is written).
	 */
	private @Nullable Finish executeBatch(Running run, Consumer consumer) {
		Claim claim = run.claim;
		List<Event> events = new ArrayList<>(claim.events().size());
		List<Cause> causes = new ArrayList<>(claim.events().size());
		for (StoredEvent stored : claim.events()) {
			Event event;
			try {
				event = this.host.decode(claim.contract(), stored);
			}
			catch (RuntimeException ex) {
				// an event that cannot be read: the events run one at a time, and it fails at its own index
				return null;
			}
			events.add(event);
			causes.add(new Cause(consumer.name(), laneOf(consumer, claim), event.index(), claim.attempt()));
		}
		run.current = events.get(0);
		Event last = events.get(events.size() - 1);
		Observation observation = eventObservation(run, consumer, last).start();
		try {
			List<EventToStore> returned;
			try (Observation.Scope scope = observation.openScope()) {
				returned = this.host.runBatch(consumer, claim.session(), events, claim.attempt(), claim.failures(), run.signal,
						causes);
			}
			if (run.signal.isAborted()) {
				aborted(run, consumer, last, observation);
				return abortedThrough(run, returned, last);
			}
			observation.lowCardinalityKeyValue(A2Observations.OUTCOME, "completed");
			return Finish.completed(claim, returned, last.index());
		}
		catch (Throwable ex) {
			observation.error(ex);
			if (run.signal.isAborted()) {
				aborted(run, consumer, last, observation);
				return abortedThrough(run, List.of(), last);
			}
			observation.lowCardinalityKeyValue(A2Observations.OUTCOME, "failed");
			logger.debug("Batch of " + events.size() + " events of consumer '" + consumer.name() + "' failed; running them one at a time", ex);
			return null;
		}
		finally {
			observation.stop();
		}
	}

	/**
	 * abortOn ends the events of the attempt it aborted, through {@code event}, with what the runs
	 * returned (an end event written on the abort); any other abort (superseded, lapsed, cleared)
	 * writes nothing.
	 */
	private static @Nullable Finish abortedThrough(Running run, List<EventToStore> returned, Event event) {
		A2Exception reason = run.signal.reason();
		boolean ended = reason != null && reason.code() == ErrorCode.ABORTED && !run.lost;
		return ended ? Finish.completed(run.claim, returned, event.index()) : null;
	}

	/** Records how a run that was aborted while it ran ended; an abortOn event's or a clear's abort is logged. */
	private void aborted(Running run, Consumer consumer, Event event, Observation observation) {
		Running.Abort by = run.abortedBy;
		A2Exception reason = run.signal.reason();
		boolean abort = by != null && reason != null && reason.code() == ErrorCode.ABORTED;
		observation.lowCardinalityKeyValue(A2Observations.OUTCOME, abort ? "aborted" : "superseded");
		if (!abort) {
			return;
		}
		observation.highCardinalityKeyValue(A2Observations.ABORTED_BY, by.type());
		observation.highCardinalityKeyValue(A2Observations.ABORTED_BY_INDEX, Long.toString(by.index()));
		if (logger.isInfoEnabled()) {
			logger.info("Consumer '" + consumer.name() + "' aborted its run of event " + event.index() + " of session '"
					+ run.claim.session() + "' (attempt " + run.claim.attempt() + "): "
					+ (by.type().equals(EventStore.CLEAR_MARKER) ? "the session was cleared at index " + by.index()
							: "event " + by.index() + " of type '" + by.type() + "' arrived"));
		}
	}

	/** Records an event whose abort event was in the log before its run could start: done, not run. */
	private void notStarted(Running run, Consumer consumer, Event event, Event aborting) {
		Observation observation = eventObservation(run, consumer, event).start();
		observation.lowCardinalityKeyValue(A2Observations.OUTCOME, "aborted");
		observation.highCardinalityKeyValue(A2Observations.ABORTED_BY, aborting.type());
		observation.highCardinalityKeyValue(A2Observations.ABORTED_BY_INDEX, Long.toString(aborting.index()));
		observation.stop();
		if (logger.isInfoEnabled()) {
			logger.info("Consumer '" + consumer.name() + "' did not start its run of event " + event.index() + " of session '"
					+ run.claim.session() + "' (attempt " + run.claim.attempt() + "): event " + aborting.index() + " of type '"
					+ aborting.type() + "' aborts it and was in the log before the run could start; recorded as aborted");
		}
	}

	private Observation eventObservation(Running run, Consumer consumer, Event event) {
		Observation observation = Observation.createNotStarted(A2Observations.EVENT, this.host.observations())
			.lowCardinalityKeyValue(A2Observations.CONTRACT, run.claim.contract())
			.lowCardinalityKeyValue(A2Observations.CONSUMER, consumer.name())
			.lowCardinalityKeyValue(A2Observations.EVENT_TYPE, event.type())
			.highCardinalityKeyValue(A2Observations.SESSION, run.claim.session())
			.highCardinalityKeyValue(A2Observations.EVENT_INDEX, Long.toString(event.index()))
			.highCardinalityKeyValue(A2Observations.EVENT_ID, event.id())
			.highCardinalityKeyValue(A2Observations.ATTEMPT, Integer.toString(run.claim.attempt()))
			.highCardinalityKeyValue(A2Observations.AGE,
					Long.toString(Duration.between(event.createdAt(), this.host.clock().instant()).toMillis()));
		if (run.claim.cursor()) {
			observation.highCardinalityKeyValue(A2Observations.LAG, Long.toString(Math.max(0, run.claim.target() - event.index())));
		}
		return observation;
	}

	private Finish failed(Running run, Consumer consumer, Throwable ex, List<EventToStore> returned, long through,
			long failedIndex) {
		int failures = pastHead(run.claim, through) ? 1 : run.claim.failures() + 1;
		boolean dead = failures >= this.settings.maxFailures() || ex instanceof NonRetriableException;
		Instant retryAt = this.host.clock().instant().plus(this.settings.retryDelay(failures));
		// a message may hold what PostgreSQL cannot store (a NUL): refused, it would fail the write of every
		// finish written with it, and this failure would never be recorded
		String error = StorableText.replacingUnstorable(ex.getClass().getSimpleName() + ": " + ex.getMessage());
		if (!dead) {
			logger.debug("Consumer '" + consumer.name() + "' failed on event " + failedIndex + " of session '"
					+ run.claim.session() + "' (failure " + failures + "), retrying at " + retryAt, ex);
		}
		else {
			logger.warn("Consumer '" + consumer.name() + "' dead-lettered event " + failedIndex + " of session '"
					+ run.claim.session() + "' after " + failures + " failure(s)", ex);
		}
		// a unit's index is its key; a cursor keeps what completed before the failure
		return Finish.failed(run.claim, returned, run.claim.cursor() ? through : run.claim.index(), error, failedIndex,
				retryAt, dead);
	}

	/**
	 * Whether a cursor's attempt has gone past the event its counters (attempt, failures) are for: its
	 * head. An event after one the attempt completed is on its first try, and fails there for the first
	 * time, as the store counts it.
	 */
	private static boolean pastHead(Claim claim, long through) {
		return claim.cursor() && through > claim.position();
	}

	private static @Nullable String laneOf(Consumer consumer, Claim claim) {
		return (consumer.lane() instanceof Lane.Fixed fixed) ? fixed.name() : claim.laneKey();
	}

}
