package dev.a2.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.a2.A2Exception;
import dev.a2.Cause;
import dev.a2.Consumer;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.live.SessionChange;
import dev.a2.store.Claim;
import dev.a2.store.EventStore;
import dev.a2.store.OutageLog;
import dev.a2.store.StoredEvent;
import dev.a2.store.WorkStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The leases of running attempts and what aborts them: a heartbeat renews the claims (an attempt
 * whose claim lapsed or was ended is aborted), abortOn events abort the runs they name, a clear
 * aborts the runs of the events before it — at once when the change is made here or told by
 * another instance, at the next heartbeat at the latest.
 * <p>
 * An abort is decided against the moment a run starts ({@link #abortedBeforeStart}): an abort event
 * already in the log then keeps the run from starting; only one appended later aborts it while it
 * runs. So a run is never cut at a random later point for an event that was there before it began.
 */
final class Leases {

	private static final Log logger = LogFactory.getLog(Drainer.class);

	/** How many later events a check reads to find abortOn events appended elsewhere or returned by runs. */
	private static final int ABORT_SCAN = 1000;

	private final DrainHost host;

	private final WorkStore work;

	private final Duration lease;

	private final RunningAttempts running;

	private final ScheduledExecutorService timer;

	private final OutageLog outage = new OutageLog(logger, "Renewing the leases of running consumer attempts");

	/**
	 * @param heartbeat how often the timer renews the leases; {@code null} for no timer (the
	 * application calls {@link #heartbeat()})
	 */
	Leases(DrainHost host, WorkStore work, Duration lease, @Nullable Duration heartbeat, RunningAttempts running) {
		this.host = host;
		this.work = work;
		this.lease = lease;
		this.running = running;
		this.timer = Executors.newSingleThreadScheduledExecutor(Drainer.daemon(() -> "a2-heartbeat"));
		if (heartbeat != null) {
			long every = heartbeat.toMillis();
			this.timer.scheduleWithFixedDelay(this::heartbeat, every, every, TimeUnit.MILLISECONDS);
		}
	}

	void heartbeat() {
		try {
			List<Running> live = this.running.all().stream().filter((r) -> !r.lost).toList();
			if (live.isEmpty()) {
				return;
			}
			Instant until = this.host.clock().instant().plus(this.lease);
			Set<UUID> held = this.work.renew(live.stream().map((r) -> r.claim).toList(), until);
			this.outage.succeeded();
			for (Running run : live) {
				if (!held.contains(run.claim.token()) && this.running.contains(run.claim.token())) {
					run.lost = true;
					long marker = clearedPast(run);
					if (marker > 0) {
						// a clear made on another instance ended the claim: aborted as the clear, as on the instance
						// that cleared (its log line, aborted by a2.cleared), not as a lost claim without a word
						abort(run, new Running.Abort(EventStore.CLEAR_MARKER, marker), "the session was cleared");
					}
					else {
						this.host.abort(run.signal, new A2Exception(ErrorCode.CLAIM_EXPIRED,
								"the claim of this attempt lapsed or was ended; another attempt may run the unit"));
					}
				}
				else {
					if (held.contains(run.claim.token())) {
						this.host.holdUntil(run.signal, until, null);
					}
					abortOnLaterEvents(run);
				}
			}
		}
		catch (RuntimeException ex) {
			if (!this.outage.failed(ex)) {
				logger.warn("Could not renew the leases of running consumer attempts", ex);
			}
		}
	}

	/**
	 * Another instance changed a session this instance runs attempts of: its abortOn events, or its
	 * clear, abort them here now rather than at the next heartbeat.
	 */
	void changedElsewhere(SessionChange change) {
		if (change.kind() == SessionChange.Kind.CLEARED) {
			if (this.running.all().stream().anyMatch((run) -> runs(run, change.contract(), change.session()))) {
				onTimer(this::heartbeat);
			}
			return;
		}
		scanLaterEvents(change.contract(), change.session());
	}

	/**
	 * Reads, off the caller's thread, what was appended to a session after the events its running
	 * attempts run, and aborts those that an abortOn event among them names: for events appended by
	 * another instance, and for the events this instance's runs returned, which no append here saw.
	 */
	void scanLaterEvents(String contract, String session) {
		List<Running> watching = this.running.all()
			.stream()
			.filter((run) -> runs(run, contract, session) && run.consumer != null && !run.consumer.abortOn().isEmpty())
			.toList();
		if (!watching.isEmpty()) {
			onTimer(() -> watching.forEach(this::abortOnLaterEvents));
		}
	}

	private static boolean runs(Running run, String contract, String session) {
		return run.claim.contract().equals(contract) && run.claim.session().equals(session);
	}

	/** The listener's and the finisher's threads must not wait for the store: the heartbeat's does. */
	private void onTimer(Runnable task) {
		try {
			this.timer.execute(task);
		}
		catch (RejectedExecutionException ex) {
			// stopping
		}
	}

	/**
	 * Decides, before an event's run starts, whether it starts: an abort event of the consumer's
	 * {@code abortOn} already in the log after the event (appended before the claim, or while it was
	 * being made) means it does not, and the run is recorded as aborted. From here on only an abort
	 * event appended after the events this read saw aborts the run: a heartbeat's scan can never cut
	 * it for one that was there before it started.
	 * @return the event that aborts it, or {@code null} when it starts
	 */
	@Nullable AbortBeforeStart abortedBeforeStart(Running run, Event event) {
		synchronized (run) {
			run.current = event;
			run.startedAfter = Running.DECIDING;
			// an abort event told before this point committed before the read below, which sees it
			run.abortArrived = false;
		}
		long seen = event.index();
		Event aborting = null;
		boolean begun = false;
		Consumer consumer = run.consumer;
		if (consumer != null && !consumer.abortOn().isEmpty()) {
			Set<String> types = types(consumer);
			long after = event.index();
			while (aborting == null) {
				List<StoredEvent> page = this.host.range(run.claim.contract(), run.claim.session(), after, Long.MAX_VALUE,
						ABORT_SCAN);
				for (StoredEvent later : page) {
					seen = later.index();
					Cause cause = later.cause();
					if (cause != null && cause.index() == event.index() && cause.consumer().equals(consumer.name())) {
						begun = true;
					}
					if (types.contains(later.type())) {
						Event arrived = this.host.decode(run.claim.contract(), later);
						if (aborts(consumer, event, arrived)) {
							aborting = arrived;
							break;
						}
					}
				}
				if (page.size() < ABORT_SCAN) {
					break;
				}
				after = seen;
			}
		}
		boolean arrivedMeanwhile;
		synchronized (run) {
			// indexes become visible in order: whatever the read did not see comes after `seen`
			run.startedAfter = seen;
			arrivedMeanwhile = run.abortArrived;
			run.abortArrived = false;
		}
		if (aborting == null && arrivedMeanwhile) {
			onTimer(() -> abortOnLaterEvents(run));
		}
		return (aborting != null) ? new AbortBeforeStart(aborting, begun) : null;
	}

	/**
	 * Aborts a run before its code starts, for an abort event that arrived while no attempt of its
	 * event ran, after an earlier attempt had begun (see {@link AbortBeforeStart#begun()}).
	 */
	void abortAtStart(Running run, Event aborting) {
		abort(run, new Running.Abort(aborting.type(), aborting.index()), "event " + aborting.index() + " of type '"
				+ aborting.type() + "' arrived while no attempt ran, after an earlier attempt had begun");
	}

	/**
	 * An abort event in the log before an event's run could start.
	 * @param aborting the event that aborts the run
	 * @param begun whether an earlier attempt of the consumer's run of the event began and left events of its
	 * own in the log before it (an assistant's first words): their work is half done, and the code is
	 * to end it (a reply's end event), so this attempt runs with its signal aborted instead of not at all
	 */
	record AbortBeforeStart(Event aborting, boolean begun) {
	}

	/**
	 * Aborts running attempts of a session's consumers that {@code arrived} aborts (abortOn): runs
	 * that started before it was appended.
	 */
	void abortOn(String contract, String session, Event arrived) {
		for (Running run : this.running.all()) {
			Consumer consumer = run.consumer;
			if (consumer == null || !abortsOn(consumer, arrived.type()) || !runs(run, contract, session)) {
				continue;
			}
			synchronized (run) {
				if (run.startedAfter == Running.DECIDING) {
					run.abortArrived = true;
					continue;
				}
				if (arrived.index() <= run.startedAfter) {
					// it was in the log when the run started: the start was decided with it
					continue;
				}
			}
			Event trigger = run.current;
			if (trigger != null && trigger.index() < arrived.index() && aborts(consumer, trigger, arrived)) {
				abort(run, new Running.Abort(arrived.type(), arrived.index()),
						"event " + arrived.index() + " of type '" + arrived.type() + "' arrived");
			}
		}
	}

	/** Reads what was appended after a run started and aborts the run if any of it says so. */
	private void abortOnLaterEvents(Running run) {
		Event current = run.current;
		if (run.consumer == null || run.consumer.abortOn().isEmpty() || current == null || run.signal.isAborted()) {
			return;
		}
		long after;
		synchronized (run) {
			if (run.startedAfter == Running.DECIDING) {
				run.abortArrived = true;
				return;
			}
			after = Math.max(run.startedAfter, current.index());
		}
		Set<String> types = types(run.consumer);
		for (StoredEvent later : this.host.range(run.claim.contract(), run.claim.session(), after, Long.MAX_VALUE,
				ABORT_SCAN)) {
			if (types.contains(later.type())) {
				abortOn(run.claim.contract(), run.claim.session(), this.host.decode(run.claim.contract(), later));
			}
		}
	}

	/** The index of a clear of the run's session after its event, or 0 (none, or the database is away). */
	private long clearedPast(Running run) {
		try {
			long marker = this.host.clearedAt(run.claim.contract(), run.claim.session());
			return (marker > run.claim.index()) ? marker : 0;
		}
		catch (RuntimeException ex) {
			return 0;
		}
	}

	/** Aborts running attempts whose trigger a clear ended. */
	void abortCleared(String contract, String session, long markerIndex) {
		for (Running run : this.running.all()) {
			Claim claim = run.claim;
			if (claim.contract().equals(contract) && claim.session().equals(session) && claim.index() < markerIndex) {
				run.lost = true;
				abort(run, new Running.Abort(EventStore.CLEAR_MARKER, markerIndex), "the session was cleared");
			}
		}
	}

	private void abort(Running run, Running.Abort by, String why) {
		if (run.signal.isAborted()) {
			return;
		}
		run.abortedBy = by;
		this.host.abort(run.signal, new A2Exception(ErrorCode.ABORTED, why));
	}

	/** Whether the consumer names {@code type} in its abortOn (without allocating: every append asks, for every run). */
	private static boolean abortsOn(Consumer consumer, String type) {
		for (Consumer.AbortOn abort : consumer.abortOn()) {
			if (abort.type().equals(type)) {
				return true;
			}
		}
		return false;
	}

	private static Set<String> types(Consumer consumer) {
		Set<String> types = new HashSet<>();
		consumer.abortOn().forEach((abort) -> types.add(abort.type()));
		return types;
	}

	/** Whether {@code arrived} aborts the run of {@code trigger}; a predicate that throws does not abort. */
	private static boolean aborts(Consumer consumer, Event trigger, Event arrived) {
		for (Consumer.AbortOn abort : consumer.abortOn()) {
			if (!abort.type().equals(arrived.type())) {
				continue;
			}
			try {
				if (abort.when().test(trigger, arrived)) {
					return true;
				}
			}
			catch (RuntimeException ex) {
				logger.warn("The abort predicate of consumer '" + consumer.name() + "' failed on event " + arrived.index()
						+ " for the run of event " + trigger.index() + "; taken as not aborting", ex);
			}
		}
		return false;
	}

	void shutdown() {
		this.timer.shutdownNow();
	}

}
