package dev.a2.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;

import dev.a2.A2Exception;
import dev.a2.Consumer;
import dev.a2.DrainActivity;
import dev.a2.DrainScheduling;
import dev.a2.DrainSettings;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.live.SessionChange;
import dev.a2.store.Claim;
import dev.a2.store.EventToStore;
import dev.a2.store.InstanceLiveness;
import dev.a2.store.WorkStore;
import dev.a2.store.WorkStore.ConsumerRef;
import dev.a2.store.WorkStore.SessionRef;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Runs consumers durably on this instance: claims a session's runnable units ({@link ClaimLoops}),
 * runs them on a bounded executor ({@link RunExecution}), renews their leases while they run
 * ({@link Leases}), and writes how they ended in batches ({@link Finisher}).
 * <p>
 * Threads: session loops (claiming) on a small pool with a bounded queue; runs on virtual threads
 * when the JVM has them (else a pool), never more than {@code concurrency} at once; one finisher
 * that writes finished attempts together; one timer for heartbeats. Nothing in memory grows with the
 * backlog: what does not fit is left in the database for the sweep to find. Internal to A2.
 */
public final class Drainer {

	private static final Log logger = LogFactory.getLog(Drainer.class);

	private static final String EXHAUSTED = "every attempt ended before it finished";

	private final DrainHost host;

	private final WorkStore work;

	private final DrainSettings settings;

	private final List<ConsumerRef> consumerRefs = new ArrayList<>();

	/**
	 * Where each backfilling consumer's backfill goes on at the next sweep: a sweep looks at the next
	 * sweep-batch sessions only, and the sweeps walk them all over and over ("" starts over). Kept
	 * here, not in the database: an instance that starts begins from the first session.
	 */
	private final Map<ConsumerRef, String> backfilledThrough = new ConcurrentHashMap<>();

	private final RunningAttempts running;

	private final Finisher finisher;

	private final ClaimLoops loops;

	private final Leases leases;

	private final Consumption consumption;

	private final AutoCloseable listening;

	private final InstanceLiveness liveness;

	/** Whether {@link #stop} or {@link #halt} has run: each stops the drainer once. */
	private final AtomicBoolean stopped = new AtomicBoolean();

	/** Whether {@link #consumerRefs} are recorded in the store, for every instance to know by name. */
	private volatile boolean consumersRecorded;

	public Drainer(DrainHost host, WorkStore work, DrainSettings settings) {
		this(host, work, settings, DrainScheduling.AUTOMATIC);
	}

	/** @param scheduling whether heartbeats run on a timer of their own, or only when {@link #heartbeat()} is called */
	public Drainer(DrainHost host, WorkStore work, DrainSettings settings, DrainScheduling scheduling) {
		this.host = host;
		this.work = work;
		this.settings = settings;
		for (Consumer consumer : host.consumers()) {
			this.consumerRefs.add(new ConsumerRef(consumer.contract(), consumer.name()));
		}
		this.running = new RunningAttempts(host.changes());
		this.finisher = new Finisher(host, work, this.running);
		this.leases = new Leases(host, work, settings.lease(),
				(scheduling == DrainScheduling.AUTOMATIC) ? settings.heartbeat() : null, this.running);
		this.liveness = work.liveness(this::identityLost);
		this.loops = new ClaimLoops(host, work, settings, new RunExecution(host, settings, this.leases), this.finisher,
				this.running, runExecutor(settings), this.liveness::owner);
		this.consumption = new Consumption(host, work, this.finisher.progress, this.loops::request);
		// what runs return may hold abortOn events for other runs here, which no append here saw
		this.finisher.start(this.loops::request, this.leases::scanLaterEvents);
		this.listening = host.changes().listen(this::changedElsewhere);
		recordConsumers();
	}

	/**
	 * Records the consumers this instance runs, once: an instance that runs none of them, reading dead
	 * letters, tells them from a misspelt name. Tried again at every sweep until the store took them.
	 */
	private void recordConsumers() {
		if (this.consumersRecorded) {
			return;
		}
		try {
			this.work.recordConsumers(this.consumerRefs);
			this.consumersRecorded = true;
		}
		catch (RuntimeException ex) {
			// the database is away at start-up: the sweeps try again
			logger.debug("Could not record this instance's consumers yet", ex);
		}
	}

	/** Drains a session on this instance soon; a no-op while stopping. */
	public void request(String contract, String session) {
		this.loops.request(contract, session);
	}

	/**
	 * Leases, for an append outside a transaction, the units its events create that can start here at
	 * once (independent-lane units of consumers this instance runs, one per free run permit): they are
	 * stored claimed by this instance, and their runs start when the append commits. {@code null}
	 * when there is none to lease.
	 */
	public @Nullable AppendLeases leaseAhead(String contract, List<EventToStore> events) {
		return AppendLeases.take(this.loops, this.host, contract, events,
				this.host.clock().instant().plus(this.settings.lease()), this.liveness.owner());
	}

	/**
	 * Another instance changed a session: its new work is drained here at once rather than at the
	 * next sweep, and its events abort what they abort here rather than at the next heartbeat.
	 */
	private void changedElsewhere(@Nullable SessionChange change) {
		if (change == null || change.local() || this.loops.stopping()) {
			return;
		}
		if (change.kind() == SessionChange.Kind.WORK) {
			request(change.contract(), change.session());
		}
		if (change.kind() != SessionChange.Kind.PRESENCE) {
			this.leases.changedElsewhere(change);
		}
	}

	/**
	 * This instance lost the identity its claims record (its liveness connection dropped): the others
	 * see it gone and take those claims over, so their attempts here stop now rather than run twice
	 * until a heartbeat finds them taken; nothing they return is written.
	 */
	private void identityLost(int owner) {
		for (Running run : this.running.all()) {
			if (run.owner != null && run.owner == owner && !run.lost) {
				run.lost = true;
				this.host.abort(run.signal, new A2Exception(ErrorCode.CLAIM_EXPIRED,
						"this instance lost the connection that shows it alive; another instance takes the unit over"));
			}
		}
	}

	/** Renews the leases of running attempts now (it also runs on its own timer). */
	public void heartbeat() {
		this.leases.heartbeat();
	}

	/** Aborts running attempts of a session's consumers that {@code arrived} aborts (abortOn). */
	public void abortOn(String contract, String session, Event arrived) {
		this.leases.abortOn(contract, session, arrived);
	}

	/** Aborts running attempts whose trigger a clear ended. */
	public void abortCleared(String contract, String session, long markerIndex) {
		this.leases.abortCleared(contract, session, markerIndex);
	}

	/**
	 * Drives a fixed-lane consumer's cursor in a session past {@code through} (the head when
	 * {@code null}) and answers the index it reached.
	 * @param caller the consumer that consumes, from inside its run, or {@code null}
	 */
	public long consume(String contract, String session, String consumer, @Nullable Long through, @Nullable String caller) {
		return this.consumption.consume(contract, session, consumer, through, caller);
	}

	/**
	 * Finds due work across the database (lapsed leases, passed back-offs, unclaimed units, backfills,
	 * scheduled tasks) and drains it; any number of instances may sweep at once.
	 * @return how many sessions it started draining
	 */
	public int sweep() {
		if (this.loops.stopping()) {
			return 0;
		}
		recordConsumers();
		Instant now = this.host.clock().instant();
		// the claims of instances PostgreSQL no longer sees alive are taken over now, not after their lease
		int orphaned = this.work.lapseOrphaned();
		if (orphaned > 0) {
			// said by the one sweep that took them: an operator sees a crash taken over, not only "attempt 2" later
			logger.info("Took over " + orphaned + " consumer claim(s) of instances PostgreSQL no longer sees alive: "
					+ "their units run again now, on this instance or another");
		}
		int exhausted = this.work.expireExhausted(now, this.settings.maxFailures(), EXHAUSTED);
		if (exhausted > 0) {
			// a dead letter of a run that throws is told at WARN; one of runs that kept dying was not told at all,
			// right after "their units run again now"
			logger.warn("Dead-lettered " + exhausted + " consumer unit(s) whose every attempt ended before it finished ("
					+ this.settings.maxFailures() + " attempts, a2.drain.max-failures): the a2 actuator endpoint's "
					+ "dead-letters lists them, and a redrive runs one again");
		}
		for (Consumer consumer : this.host.consumers()) {
			if (consumer.backfill()) {
				ConsumerRef ref = new ConsumerRef(consumer.contract(), consumer.name());
				this.backfilledThrough.put(ref, this.work.backfill(consumer.contract(), consumer.name(), consumer.types(),
						this.backfilledThrough.getOrDefault(ref, ""), this.settings.sweepBatch()));
			}
		}
		ScheduledDeliveries.deliverDue(this.work, now, this.host.contracts(), this.host::deliver, this.loops::stopping);
		List<SessionRef> due = this.work.sessionsWithDueWork(now, this.consumerRefs, this.settings.sweepBatch());
		due.forEach((s) -> request(s.contract(), s.session()));
		return due.size();
	}

	/**
	 * Stops claiming, lets running attempts finish within {@code grace}, then aborts the rest and
	 * releases their claims so that another instance takes them at once.
	 */
	public void stop(Duration grace) {
		if (!this.stopped.compareAndSet(false, true)) {
			// stopped already (Spring's context stops the drain's lifecycle, then closes the server): a run
			// aborted by that stop is counted running until it returns, and this one would wait its grace again
			return;
		}
		this.loops.stop();
		// said, so that an operator knows what a stopping instance waits for, and what it hands over
		int waiting = this.running.size();
		if (waiting > 0 && !grace.isZero()) {
			logger.info("Stopping: waiting up to " + grace.toMillis() + " ms (a2.drain.stop-grace) for " + waiting
					+ " running consumer attempt(s) to finish");
		}
		long deadline = System.nanoTime() + grace.toNanos();
		while ((!this.running.isEmpty() || !this.finisher.idle()) && System.nanoTime() < deadline) {
			synchronized (this.finisher.progress) {
				try {
					this.finisher.progress.wait(20);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					break;
				}
			}
		}
		List<Claim> abandoned = new ArrayList<>();
		for (Running run : this.running.all()) {
			run.lost = true;
			this.host.abort(run.signal, new A2Exception(ErrorCode.CLAIM_EXPIRED, "the instance is stopping"));
			abandoned.add(run.claim);
		}
		try {
			this.work.release(abandoned);
			if (!abandoned.isEmpty()) {
				logger.info("Stopped " + abandoned.size() + " consumer attempt(s) still running after the stop grace "
						+ "and released their claims; another instance runs them again at once: "
						+ String.join(", ", abandoned.stream()
							.map((claim) -> "'" + claim.consumer() + "' on event " + claim.index() + " of session '"
									+ claim.session() + "'")
							.toList()));
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release " + abandoned.size() + " claim(s); they are taken over when their leases lapse", ex);
		}
		shutdown();
	}

	/**
	 * Stops at once, finishing and releasing nothing, as a crash would (for tests): its identity ends
	 * as a dead process's connection does, so other instances take its claims over at their next sweep.
	 */
	public void halt() {
		if (!this.stopped.compareAndSet(false, true)) {
			return;
		}
		this.loops.stop();
		this.running.all().forEach((run) -> run.lost = true);
		shutdown();
	}

	private void shutdown() {
		this.finisher.halt();
		try {
			this.listening.close();
		}
		catch (Exception ex) {
			// nothing to release
		}
		this.leases.shutdown();
		this.loops.shutdown();
		this.liveness.close();
	}

	/** Attempts running on this instance now. */
	public int running() {
		return this.running.size();
	}

	/** What this drainer is doing now. */
	public DrainActivity activity() {
		List<DrainActivity.RunningAttempt> attempts = new ArrayList<>();
		for (Running run : this.running.all()) {
			Event current = run.current;
			attempts.add(new DrainActivity.RunningAttempt(run.claim.contract(), run.claim.session(), run.claim.consumer(),
					(current != null) ? current.index() : run.claim.index(), run.claim.attempt()));
		}
		return new DrainActivity(this.loops.draining(), attempts, this.finisher.unwritten());
	}

	/**
	 * Runs {@code listener} whenever the activity changes (a claim loop starts or ends, a run starts,
	 * finishes are written), on the drainer's threads: it must return at once.
	 */
	public void onProgress(Runnable listener) {
		this.finisher.addListener(listener);
	}

	/**
	 * Waits until {@code condition} holds for this drainer's activity, waking whenever a claim loop
	 * starts or ends, a run starts, or finishes are written (never polling the store).
	 * @return whether it held before {@code timeout} passed
	 */
	public boolean await(Predicate<DrainActivity> condition, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this.finisher.progress) {
			while (!condition.test(activity())) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this.finisher.progress, left);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			}
			return true;
		}
	}

	private static ExecutorService runExecutor(DrainSettings settings) {
		try {
			// Java 21+: a virtual thread per run; the permits bound how many run at once
			return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
		}
		catch (ReflectiveOperationException ex) {
			AtomicInteger threads = new AtomicInteger();
			return Executors.newFixedThreadPool(settings.concurrency(), daemon(() -> "a2-run-" + threads.incrementAndGet()));
		}
	}

	static ThreadFactory daemon(Supplier<String> name) {
		return (runnable) -> {
			Thread thread = new Thread(runnable, name.get());
			thread.setDaemon(true);
			return thread;
		};
	}

}
