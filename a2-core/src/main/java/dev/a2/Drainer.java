package dev.a2;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.a2.live.SessionChange;
import dev.a2.store.Claim;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;
import dev.a2.store.Finish;
import dev.a2.store.WorkStore;
import dev.a2.store.WorkStore.ConsumerRef;
import dev.a2.store.WorkStore.CursorState;
import dev.a2.store.WorkStore.SessionRef;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * Runs consumers durably on this instance: claims a session's runnable units, runs them on a
 * bounded executor, renews their leases while they run, and writes how they ended in batches.
 * <p>
 * Threads: session loops (claiming) on a small pool with a bounded queue; runs on virtual threads
 * when the JVM has them (else a pool), never more than {@code concurrency} at once; one completer
 * that writes finished attempts together; one timer for heartbeats. Nothing in memory grows with the
 * backlog: what does not fit is left in the database for the sweep to find.
 */
final class Drainer {

	private static final Log logger = LogFactory.getLog(Drainer.class);

	private static final int LOOP_QUEUE = 10_000;

	private static final int FINISH_BATCH = 256;

	private static final String EXHAUSTED = "every attempt ended before it finished";

	/** How many later events a heartbeat reads to find abortOn events appended elsewhere. */
	private static final int ABORT_SCAN = 1000;

	private final A2Server server;

	private final WorkStore work;

	private final DrainSettings settings;

	/** Per contract, the consumers this instance runs: it claims only their work. */
	private final Map<String, List<String>> consumerNames = new HashMap<>();

	private final List<ConsumerRef> consumerRefs = new ArrayList<>();

	private final ThreadPoolExecutor loops;

	private final ExecutorService runs;

	private final Semaphore permits;

	private final ScheduledExecutorService timer;

	private final Thread completer;

	private final BlockingQueue<Done> done = new LinkedBlockingQueue<>();

	private final Map<SessionRef, LoopState> loopStates = new ConcurrentHashMap<>();

	private final Map<UUID, Running> running = new ConcurrentHashMap<>();

	/** Sessions whose loop found no free permit; drained again when one frees up. */
	private final Set<SessionRef> starved = ConcurrentHashMap.newKeySet();

	/** Which consumer (contract/session/consumer) a consume call waits for, to refuse cycles at once. */
	private final Map<String, String> waitsFor = new HashMap<>();

	private final Object progress = new Object();

	private volatile boolean stopping;

	private volatile boolean halted;

	private final AutoCloseable listening;

	Drainer(A2Server server, WorkStore work, DrainSettings settings) {
		this.server = server;
		this.work = work;
		this.settings = settings;
		for (Consumer consumer : server.consumers()) {
			this.consumerNames.computeIfAbsent(consumer.contract(), (c) -> new ArrayList<>()).add(consumer.name());
			this.consumerRefs.add(new ConsumerRef(consumer.contract(), consumer.name()));
		}
		AtomicInteger loopThreads = new AtomicInteger();
		this.loops = new ThreadPoolExecutor(2, 2, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(LOOP_QUEUE),
				daemon(() -> "a2-drain-" + loopThreads.incrementAndGet()));
		this.runs = runExecutor();
		this.permits = new Semaphore(settings.concurrency());
		this.timer = Executors.newSingleThreadScheduledExecutor(daemon(() -> "a2-heartbeat"));
		long heartbeat = settings.heartbeat().toMillis();
		this.timer.scheduleWithFixedDelay(this::heartbeat, heartbeat, heartbeat, TimeUnit.MILLISECONDS);
		this.completer = daemon(() -> "a2-completer").newThread(this::complete);
		this.completer.start();
		this.listening = server.changes.listen(this::changedElsewhere);
	}

	/**
	 * Another instance changed a session: its new work is drained here at once rather than at the
	 * next sweep, and its events abort what they abort here rather than at the next heartbeat.
	 */
	private void changedElsewhere(@Nullable SessionChange change) {
		if (change == null || change.local() || this.stopping) {
			return;
		}
		if (change.kind() == SessionChange.Kind.WORK) {
			request(change.contract(), change.session());
		}
		if (change.kind() == SessionChange.Kind.PRESENCE) {
			return;
		}
		boolean affected = false;
		for (Running run : this.running.values()) {
			affected |= run.claim.contract().equals(change.contract()) && run.claim.session().equals(change.session());
		}
		if (affected) {
			// the listener's thread must not wait for the store: the heartbeat's does
			try {
				this.timer.execute(change.kind() == SessionChange.Kind.CLEARED ? this::heartbeat
						: () -> this.running.values().forEach(this::abortOnArrivalsElsewhere));
			}
			catch (RejectedExecutionException ex) {
				// stopping
			}
		}
	}

	// --- draining sessions

	/** Drains a session on this instance soon; a no-op while stopping. */
	void request(String contract, String session) {
		if (this.stopping) {
			return;
		}
		SessionRef key = new SessionRef(contract, session);
		while (true) {
			LoopState state = this.loopStates.computeIfAbsent(key, (k) -> new LoopState());
			synchronized (state) {
				if (state.removed) {
					continue;
				}
				if (state.running) {
					state.again = true;
					return;
				}
				state.running = true;
			}
			try {
				this.loops.execute(() -> loop(key, state));
			}
			catch (RejectedExecutionException ex) {
				// too many sessions waiting already: the sweep finds this one in the database
				endLoop(key, state);
			}
			return;
		}
	}

	private void loop(SessionRef key, LoopState state) {
		Observation drain = Observation.createNotStarted(A2Observations.DRAIN, this.server.observations)
			.lowCardinalityKeyValue(A2Observations.CONTRACT, key.contract())
			.highCardinalityKeyValue(A2Observations.SESSION, key.session())
			.start();
		try {
			while (!this.stopping) {
				List<Claim> claims = List.of();
				int free = Math.min(this.permits.availablePermits(), this.settings.claimBatch());
				if (free > 0) {
					Instant now = this.server.clock().instant();
					int limit = free;
					claims = Observation.createNotStarted(A2Observations.CLAIM, this.server.observations)
						.lowCardinalityKeyValue(A2Observations.CONTRACT, key.contract())
						.highCardinalityKeyValue(A2Observations.SESSION, key.session())
						.observe(() -> this.work.claim(key.contract(), key.session(),
								this.consumerNames.getOrDefault(key.contract(), List.of()), now, now.plus(this.settings.lease()),
								limit));
				}
				else {
					this.starved.add(key);
				}
				for (Claim claim : claims) {
					start(claim);
				}
				synchronized (state) {
					if (claims.isEmpty() && !state.again) {
						break;
					}
					state.again = false;
				}
			}
		}
		catch (RuntimeException ex) {
			drain.error(ex);
			logger.warn("Draining session '" + key.session() + "' of contract '" + key.contract()
					+ "' failed; the sweep will try again", ex);
		}
		drain.stop();
		endLoop(key, state);
	}

	private void endLoop(SessionRef key, LoopState state) {
		synchronized (state) {
			state.running = false;
			state.removed = true;
		}
		this.loopStates.remove(key, state);
	}

	private void start(Claim claim) {
		if (claim.events().isEmpty()) {
			// a cursor with no matching event left moves to its target
			this.done.add(new Done(new Running(claim, null, new AbortSignal()), Finish.completed(claim, List.of(), claim.target())));
			return;
		}
		Consumer consumer = this.server.consumer(claim.contract(), claim.consumer());
		if (consumer == null) {
			return;
		}
		this.permits.acquireUninterruptibly();
		Running run = new Running(claim, consumer, new AbortSignal());
		this.running.put(claim.token(), run);
		try {
			this.runs.execute(() -> execute(run));
		}
		catch (RejectedExecutionException ex) {
			this.running.remove(claim.token());
			this.permits.release();
		}
	}

	/**
	 * Runs the claim's events in order (one for a unit, a run of them for a cursor) and decides how the
	 * attempt ended: the events that completed commit with their returned events, and a failure stops
	 * the run at its event.
	 */
	private void execute(Running run) {
		Claim claim = run.claim;
		Finish finish = null;
		run.signal.bind(Thread.currentThread());
		try {
			Session session = this.server.session(claim.contract(), claim.session());
			List<EventToStore> returned = new ArrayList<>();
			long through = claim.cursor() ? claim.position() : claim.index() - 1;
			for (StoredEvent stored : claim.events()) {
				Event event = this.server.payloads.event(session.contract(), stored);
				run.current = event;
				Cause cause = new Cause(run.consumer.name(), laneOf(run.consumer, claim), event.index(), claim.attempt());
				Observation observation = eventObservation(run, event).start();
				try {
					ConsumerContext context = new ConsumerContext(event, claim.attempt(), run.signal,
							new RunSession(session, run.consumer, event, cause));
					Object result = run.consumer.handler().run(context);
					if (!run.signal.isAborted()) {
						returned.addAll(session.prepare(derivedIds(returnedEvents(result, run.consumer), event, run.consumer), cause, true));
					}
				}
				catch (Throwable ex) {
					if (!run.signal.isAborted()) {
						finish = failed(run, ex, returned, through, event.index());
						observation.error(ex);
						observation.lowCardinalityKeyValue(A2Observations.OUTCOME, finish.dead() ? "dead_lettered" : "failed");
						observation.stop();
						break;
					}
				}
				if (run.signal.isAborted()) {
					observation.lowCardinalityKeyValue(A2Observations.OUTCOME, run.lost ? "superseded" : "aborted");
					observation.stop();
					// abortOn ends the unit of the event it aborted; any other abort writes nothing
					A2Exception reason = run.signal.reason();
					boolean ended = reason != null && reason.code() == ErrorCode.ABORTED && !run.lost;
					finish = ended ? Finish.completed(claim, returned, event.index()) : null;
					break;
				}
				observation.lowCardinalityKeyValue(A2Observations.OUTCOME, "completed");
				observation.stop();
				through = event.index();
				finish = Finish.completed(claim, returned, through);
			}
		}
		catch (RuntimeException ex) {
			finish = run.signal.isAborted() ? null : failed(run, ex, List.of(), claim.cursor() ? claim.position() : claim.index(), claim.index());
		}
		finally {
			run.signal.bind(null);
			Thread.interrupted();
			this.permits.release();
			SessionRef starved = this.starved.stream().findFirst().orElse(null);
			if (starved != null && this.starved.remove(starved)) {
				request(starved.contract(), starved.session());
			}
		}
		this.done.add(new Done(run, finish));
	}

	private Observation eventObservation(Running run, Event event) {
		Observation observation = Observation.createNotStarted(A2Observations.EVENT, this.server.observations)
			.lowCardinalityKeyValue(A2Observations.CONTRACT, run.claim.contract())
			.lowCardinalityKeyValue(A2Observations.CONSUMER, run.consumer.name())
			.lowCardinalityKeyValue(A2Observations.EVENT_TYPE, event.type())
			.highCardinalityKeyValue(A2Observations.SESSION, run.claim.session())
			.highCardinalityKeyValue(A2Observations.EVENT_INDEX, Long.toString(event.index()))
			.highCardinalityKeyValue(A2Observations.EVENT_ID, event.id())
			.highCardinalityKeyValue(A2Observations.ATTEMPT, Integer.toString(run.claim.attempt()))
			.highCardinalityKeyValue(A2Observations.AGE,
					Long.toString(Duration.between(event.createdAt(), this.server.clock().instant()).toMillis()));
		if (run.claim.cursor()) {
			observation.highCardinalityKeyValue(A2Observations.LAG, Long.toString(Math.max(0, run.claim.target() - event.index())));
		}
		return observation;
	}

	private Finish failed(Running run, Throwable ex, List<EventToStore> returned, long through, long failedIndex) {
		int failures = run.claim.failures() + 1;
		boolean dead = failures >= this.settings.maxFailures() || ex instanceof NonRetriableException;
		Instant retryAt = this.server.clock().instant().plus(this.settings.retryDelay(failures));
		String error = ex.getClass().getSimpleName() + ": " + ex.getMessage();
		if (!dead) {
			logger.debug("Consumer '" + run.consumer.name() + "' failed on event " + failedIndex + " of session '"
					+ run.claim.session() + "' (failure " + failures + "), retrying at " + retryAt, ex);
		}
		else {
			logger.warn("Consumer '" + run.consumer.name() + "' dead-lettered event " + failedIndex + " of session '"
					+ run.claim.session() + "' after " + failures + " failure(s)", ex);
		}
		// a unit's index is its key; a cursor keeps what completed before the failure
		return Finish.failed(run.claim, returned, run.claim.cursor() ? through : run.claim.index(), error, failedIndex,
				retryAt, dead);
	}

	private static @Nullable String laneOf(Consumer consumer, Claim claim) {
		return (consumer.lane() instanceof Lane.Fixed fixed) ? fixed.name() : claim.laneKey();
	}

	private static List<NewEvent> returnedEvents(@Nullable Object result, Consumer consumer) {
		if (result == null) {
			return List.of();
		}
		if (result instanceof NewEvent event) {
			return List.of(event);
		}
		if (result instanceof Collection<?> collection) {
			List<NewEvent> events = new ArrayList<>(collection.size());
			for (Object item : collection) {
				if (!(item instanceof NewEvent event)) {
					throw new IllegalStateException("consumer '" + consumer.name() + "' returned a collection holding a "
							+ ((item != null) ? item.getClass().getName() : "null") + "; return NewEvent instances");
				}
				events.add(event);
			}
			return events;
		}
		throw new IllegalStateException("consumer '" + consumer.name() + "' returned a " + result.getClass().getName()
				+ "; return nothing, a NewEvent or a collection of them");
	}

	private static List<NewEvent> derivedIds(List<NewEvent> events, Event trigger, Consumer consumer) {
		List<NewEvent> withIds = new ArrayList<>(events.size());
		for (int i = 0; i < events.size(); i++) {
			NewEvent event = events.get(i);
			String id = (event.id() != null) ? event.id() : DerivedIds.returnedEvent(trigger.id(), i, consumer.name());
			withIds.add(new NewEvent(event.type(), event.payload(), id));
		}
		return withIds;
	}

	// --- writing how attempts ended

	private void complete() {
		List<Done> batch = new ArrayList<>();
		while (!this.halted) {
			try {
				Done first = this.done.poll(100, TimeUnit.MILLISECONDS);
				if (first == null) {
					continue;
				}
				batch.clear();
				batch.add(first);
				this.done.drainTo(batch, FINISH_BATCH - 1);
				writeFinishes(batch);
			}
			catch (InterruptedException ex) {
				if (this.halted) {
					return;
				}
			}
			catch (RuntimeException ex) {
				// the claims lapse and other attempts take over: at least once, never lost
				logger.warn("Could not record " + batch.size() + " finished consumer attempt(s); they will run again", ex);
				batch.forEach((d) -> this.running.remove(d.run.claim.token()));
			}
		}
	}

	private void writeFinishes(List<Done> batch) {
		List<Finish> finishes = new ArrayList<>(batch.size());
		for (Done d : batch) {
			if (d.finish != null && !d.run.lost) {
				finishes.add(d.finish);
			}
		}
		Set<UUID> accepted = this.halted ? Set.of()
				: Observation.createNotStarted(A2Observations.COMMIT, this.server.observations)
					.observe(() -> this.work.finish(finishes, this.server.clock().instant()));
		Set<SessionRef> sessions = new LinkedHashSet<>();
		Map<SessionRef, SessionChange.Kind> appended = new HashMap<>();
		for (Done d : batch) {
			this.running.remove(d.run.claim.token());
			SessionRef session = new SessionRef(d.run.claim.contract(), d.run.claim.session());
			if (d.finish != null && !accepted.contains(d.run.claim.token())) {
				d.run.signal.abort(new A2Exception(ErrorCode.SUPERSEDED_ATTEMPT,
						"another attempt took over this unit; nothing this attempt returned was committed"));
			}
			else if (d.finish != null && !d.finish.events().isEmpty()) {
				boolean work = d.finish.events().stream().anyMatch((event) -> !event.work().isEmpty());
				appended.merge(session, work ? SessionChange.Kind.WORK : SessionChange.Kind.EVENTS,
						(a, b) -> (a == SessionChange.Kind.WORK) ? a : b);
			}
			sessions.add(session);
		}
		// the events runs returned are in the logs now: streams here and elsewhere read them
		appended.forEach((session, kind) -> this.server.changes.publish(kind, session.contract(), session.session()));
		synchronized (this.progress) {
			this.progress.notifyAll();
		}
		sessions.forEach((s) -> request(s.contract(), s.session()));
	}

	// --- leases

	void heartbeat() {
		try {
			List<Running> live = this.running.values().stream().filter((r) -> !r.lost).toList();
			if (live.isEmpty()) {
				return;
			}
			Set<UUID> held = this.work.renew(live.stream().map((r) -> r.claim).toList(),
					this.server.clock().instant().plus(this.settings.lease()));
			for (Running run : live) {
				if (!held.contains(run.claim.token()) && this.running.containsKey(run.claim.token())) {
					run.lost = true;
					run.signal.abort(new A2Exception(ErrorCode.CLAIM_EXPIRED,
							"the claim of this attempt lapsed or was ended; another attempt may run the unit"));
				}
				else {
					abortOnArrivalsElsewhere(run);
				}
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not renew the leases of running consumer attempts", ex);
		}
	}

	// --- aborting local attempts

	/** Aborts running attempts of a session's consumers that {@code arrived} aborts (abortOn). */
	void abortOn(String contract, String session, Event arrived) {
		for (Running run : this.running.values()) {
			Claim claim = run.claim;
			Event trigger = run.current;
			if (run.consumer == null || trigger == null || !claim.contract().equals(contract) || !claim.session().equals(session)
					|| trigger.index() >= arrived.index()) {
				continue;
			}
			for (Consumer.AbortOn abort : run.consumer.abortOn()) {
				if (abort.type().equals(arrived.type())) {
					if (abort.when().test(trigger, arrived)) {
						run.signal.abort(new A2Exception(ErrorCode.ABORTED,
								"event " + arrived.index() + " of type '" + arrived.type() + "' arrived"));
					}
				}
			}
		}
	}

	/**
	 * An abortOn event appended through another instance aborts this instance's attempt at the next
	 * heartbeat (one appended here aborts it at once).
	 */
	private void abortOnArrivalsElsewhere(Running run) {
		Event current = run.current;
		if (run.consumer == null || run.consumer.abortOn().isEmpty() || current == null || run.signal.isAborted()) {
			return;
		}
		Set<String> types = new HashSet<>();
		run.consumer.abortOn().forEach((abort) -> types.add(abort.type()));
		Contract contract = this.server.contract(run.claim.contract());
		for (StoredEvent later : this.server.events.range(run.claim.contract(), run.claim.session(), current.index(),
				Long.MAX_VALUE, ABORT_SCAN)) {
			if (types.contains(later.type())) {
				abortOn(run.claim.contract(), run.claim.session(), this.server.payloads.event(contract, later));
			}
		}
	}

	/** Aborts running attempts whose trigger a clear ended. */
	void abortCleared(String contract, String session, long markerIndex) {
		for (Running run : this.running.values()) {
			Claim claim = run.claim;
			if (claim.contract().equals(contract) && claim.session().equals(session) && claim.index() < markerIndex) {
				run.lost = true;
				run.signal.abort(new A2Exception(ErrorCode.ABORTED, "the session was cleared"));
			}
		}
	}

	// --- consume

	long consume(Session session, String consumerName, @Nullable Long through, @Nullable String caller) {
		Long reached = Observation.createNotStarted(A2Observations.CONSUME, this.server.observations)
			.lowCardinalityKeyValue(A2Observations.CONTRACT, session.contract().name())
			.lowCardinalityKeyValue(A2Observations.CONSUMER, consumerName)
			.highCardinalityKeyValue(A2Observations.SESSION, session.id())
			.observe(() -> consumeObserved(session, consumerName, through, caller));
		return (reached != null) ? reached : 0;
	}

	private long consumeObserved(Session session, String consumerName, @Nullable Long through, @Nullable String caller) {
		Consumer consumer = this.server.consumer(session.contract().name(), consumerName);
		if (consumer == null || !(consumer.lane() instanceof Lane.Fixed)) {
			throw new IllegalArgumentException("consume needs a consumer with a fixed lane; '" + consumerName
					+ "' of contract '" + session.contract().name() + "' is " + ((consumer == null) ? "not registered" : "not one"));
		}
		if (consumerName.equals(caller)) {
			throw new IllegalStateException("consumer '" + caller + "' may not consume itself: it would wait for its own run");
		}
		String contract = session.contract().name();
		long goal = (through != null) ? through : this.server.events.head(contract, session.id()).lastIndex();
		String waiter = (caller != null) ? key(contract, session.id(), caller) : null;
		if (waiter != null) {
			waitFor(waiter, key(contract, session.id(), consumerName));
		}
		try {
			long delay = 25;
			while (true) {
				CursorState cursor = this.work.cursor(contract, session.id(), consumerName);
				if (cursor == null) {
					return goal;
				}
				if (cursor.position() >= goal) {
					return cursor.position();
				}
				if (!cursor.dead() && cursor.position() >= cursor.target()) {
					// every matching event through the goal is processed
					return goal;
				}
				if (cursor.dead()) {
					throw new A2Exception(ErrorCode.CONSUMER_DEAD_LETTERED, "consumer '" + consumerName
							+ "' is dead-lettered at event " + cursor.failedIndex() + " of session '" + session.id()
							+ "'; redrive it (retry or skip) before consuming");
				}
				request(contract, session.id());
				synchronized (this.progress) {
					this.progress.wait(delay);
				}
				delay = Math.min(delay * 2, 1000);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new A2Exception(ErrorCode.ABORTED, "interrupted while consuming '" + consumerName + "'", ex);
		}
		finally {
			if (waiter != null) {
				synchronized (this.waitsFor) {
					this.waitsFor.remove(waiter);
				}
			}
		}
	}

	private void waitFor(String waiter, String waited) {
		synchronized (this.waitsFor) {
			List<String> chain = new ArrayList<>(List.of(waiter, waited));
			for (String next = this.waitsFor.get(waited); next != null; next = this.waitsFor.get(next)) {
				chain.add(next);
				if (next.equals(waiter)) {
					throw new IllegalStateException("consumers would wait on each other for ever: " + String.join(" → ", chain));
				}
			}
			this.waitsFor.put(waiter, waited);
		}
	}

	private static String key(String contract, String session, String consumer) {
		return contract + "/" + session + "/" + consumer;
	}

	// --- the sweep

	/**
	 * Finds due work across the database (lapsed leases, passed back-offs, unclaimed units, backfills,
	 * scheduled tasks) and drains it; any number of instances may sweep at once.
	 * @return how many sessions it started draining
	 */
	int sweep() {
		if (this.stopping) {
			return 0;
		}
		Instant now = this.server.clock().instant();
		this.work.expireExhausted(now, this.settings.maxFailures(), EXHAUSTED);
		for (Consumer consumer : this.server.consumers()) {
			if (consumer.backfill()) {
				this.work.backfill(consumer.contract(), consumer.name(), consumer.types(), this.settings.sweepBatch());
			}
		}
		try {
			while (!this.stopping && this.work.deliverDue(now, this.server::deliver)) {
				// one task per transaction, each exactly once
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not deliver a scheduled task; the next sweep tries again", ex);
		}
		List<SessionRef> due = this.work.sessionsWithDueWork(now, this.consumerRefs, this.settings.sweepBatch());
		due.forEach((s) -> request(s.contract(), s.session()));
		return due.size();
	}

	// --- stopping

	/**
	 * Stops claiming, lets running attempts finish within {@code grace}, then aborts the rest and
	 * releases their claims so that another instance takes them at once.
	 */
	void stop(Duration grace) {
		this.stopping = true;
		long deadline = System.nanoTime() + grace.toNanos();
		while ((!this.running.isEmpty() || !this.done.isEmpty()) && System.nanoTime() < deadline) {
			synchronized (this.progress) {
				try {
					this.progress.wait(20);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					break;
				}
			}
		}
		List<Claim> abandoned = new ArrayList<>();
		for (Running run : this.running.values()) {
			run.lost = true;
			run.signal.abort(new A2Exception(ErrorCode.CLAIM_EXPIRED, "the instance is stopping"));
			abandoned.add(run.claim);
		}
		try {
			this.work.release(abandoned);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release " + abandoned.size() + " claim(s); they are taken over when their leases lapse", ex);
		}
		shutdown();
	}

	/** Stops at once, finishing and releasing nothing, as a crash would (for tests). */
	void halt() {
		this.stopping = true;
		this.halted = true;
		this.running.values().forEach((run) -> run.lost = true);
		shutdown();
	}

	private void shutdown() {
		this.halted = true;
		try {
			this.listening.close();
		}
		catch (Exception ex) {
			// nothing to release
		}
		this.timer.shutdownNow();
		this.loops.shutdownNow();
		this.runs.shutdownNow();
		this.completer.interrupt();
	}

	int running() {
		return this.running.size();
	}

	// --- plumbing

	private ExecutorService runExecutor() {
		try {
			// Java 21+: a virtual thread per run; the permits bound how many run at once
			return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
		}
		catch (ReflectiveOperationException ex) {
			AtomicInteger threads = new AtomicInteger();
			return Executors.newFixedThreadPool(this.settings.concurrency(), daemon(() -> "a2-run-" + threads.incrementAndGet()));
		}
	}

	private static ThreadFactory daemon(java.util.function.Supplier<String> name) {
		return (runnable) -> {
			Thread thread = new Thread(runnable, name.get());
			thread.setDaemon(true);
			return thread;
		};
	}

	private static final class LoopState {

		boolean running;

		boolean again;

		boolean removed;

	}

	private static final class Running {

		final Claim claim;

		final Consumer consumer;

		final AbortSignal signal;

		volatile boolean lost;

		/** The event being run (a cursor runs several in turn). */
		volatile @Nullable Event current;

		Running(Claim claim, @Nullable Consumer consumer, AbortSignal signal) {
			this.claim = claim;
			this.consumer = consumer;
			this.signal = signal;
		}

	}

	private record Done(Running run, @Nullable Finish finish) {
	}

}
