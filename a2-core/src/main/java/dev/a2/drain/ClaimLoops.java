package dev.a2.drain;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.a2.A2Exception;
import dev.a2.A2Observations;
import dev.a2.Consumer;
import dev.a2.DrainSettings;
import dev.a2.ErrorCode;
import dev.a2.store.Claim;
import dev.a2.store.Finish;
import dev.a2.store.OutageLog;
import dev.a2.store.WorkStore;
import dev.a2.store.WorkStore.SessionRef;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One loop per session being drained on this instance: it claims the session's runnable units (no
 * more than there are free run permits) and starts each on the run executor, until a claim comes back
 * with fewer than it asked for (it took everything runnable then). A request for a session whose loop
 * runs makes it claim once more instead of starting another. A session that finds no permit free is
 * drained again as soon as one is released, by a run that ends or by a claim that needed fewer.
 * Loops run on a small pool with a bounded queue: what does not fit is left in the database for the
 * sweep to find.
 */
final class ClaimLoops {

	private static final Log logger = LogFactory.getLog(Drainer.class);

	private static final int LOOP_QUEUE = 10_000;

	private final DrainHost host;

	private final WorkStore work;

	private final DrainSettings settings;

	private final RunExecution execution;

	private final Finisher finisher;

	private final RunningAttempts running;

	/** Per contract, the consumers this instance runs: it claims only their work. */
	private final Map<String, List<String>> consumerNames = new HashMap<>();

	private final ThreadPoolExecutor loops;

	private final ExecutorService runs;

	/** The owner id claims record: this instance's identity while the store sees it alive. */
	private final Supplier<@Nullable Integer> owner;

	private final Semaphore permits;

	private final Map<SessionRef, LoopState> loopStates = new ConcurrentHashMap<>();

	/** Sessions whose loop found no free permit; drained again when one frees up. */
	private final Set<SessionRef> starved = ConcurrentHashMap.newKeySet();

	private final OutageLog outage = new OutageLog(logger, "Draining sessions");

	/**
	 * The same sessions in the order they found no permit: a permit that frees up goes to the one
	 * that has waited longest, so a session with a backlog, which is starved again after each run,
	 * takes turns with the others rather than taking every permit until its backlog is done.
	 */
	private final Queue<SessionRef> starvedInOrder = new ConcurrentLinkedQueue<>();

	private volatile boolean stopping;

	ClaimLoops(DrainHost host, WorkStore work, DrainSettings settings, RunExecution execution, Finisher finisher,
			RunningAttempts running, ExecutorService runs, Supplier<@Nullable Integer> owner) {
		this.host = host;
		this.work = work;
		this.settings = settings;
		this.execution = execution;
		this.finisher = finisher;
		this.running = running;
		this.runs = runs;
		this.owner = owner;
		for (Consumer consumer : host.consumers()) {
			this.consumerNames.computeIfAbsent(consumer.contract(), (c) -> new ArrayList<>()).add(consumer.name());
		}
		AtomicInteger loopThreads = new AtomicInteger();
		this.loops = new ThreadPoolExecutor(2, 2, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(LOOP_QUEUE),
				Drainer.daemon(() -> "a2-drain-" + loopThreads.incrementAndGet()));
		this.permits = new Semaphore(settings.concurrency());
	}

	/** Drains a session on this instance soon; a no-op while stopping. */
	void request(String contract, String session) {
		request(new SessionRef(contract, session), false);
	}

	/** @param woken whether the session's turn for a free permit came ({@link #wakeStarved}) */
	private void request(SessionRef key, boolean woken) {
		if (this.stopping) {
			return;
		}
		while (true) {
			LoopState state = this.loopStates.computeIfAbsent(key, (k) -> new LoopState());
			boolean ended;
			synchronized (state) {
				ended = state.removed;
				if (!ended) {
					if (state.running) {
						state.again = true;
						return;
					}
					state.running = true;
				}
			}
			if (ended) {
				// its loop has ended and is on its way out of the map (stopping its observation first): take
				// it out here, or this thread would spin until then
				this.loopStates.remove(key, state);
				continue;
			}
			try {
				this.loops.execute(() -> loop(key, state, woken));
			}
			catch (RejectedExecutionException ex) {
				// too many sessions waiting already: the sweep finds this one in the database
				endLoop(key, state);
			}
			return;
		}
	}

	boolean stopping() {
		return this.stopping;
	}

	void stop() {
		this.stopping = true;
	}

	void shutdown() {
		this.stopping = true;
		this.loops.shutdownNow();
		this.runs.shutdownNow();
	}

	private void loop(SessionRef key, LoopState state, boolean woken) {
		Observation drain = Observation.createNotStarted(A2Observations.DRAIN, this.host.observations())
			.lowCardinalityKeyValue(A2Observations.CONTRACT, key.contract())
			.highCardinalityKeyValue(A2Observations.SESSION, key.session())
			.start();
		try {
			boolean turn = woken;
			while (!this.stopping) {
				if (!turn && !this.starvedInOrder.isEmpty()) {
					// sessions wait for a permit: this one waits behind them, rather than take the next permit
					// that frees up (a session with a backlog would take them all, one after another)
					starve(key);
					synchronized (state) {
						if (!state.again) {
							// ended under the lock a request takes: its turn starts a new loop
							state.running = false;
							state.removed = true;
							break;
						}
						// its turn came at once (a permit was free), or a request came: this loop goes on
						state.again = false;
					}
				}
				turn = false;
				List<Claim> claims = List.of();
				Integer owner = this.owner.get();
				// permits are taken before claiming: a claim that waited for one could outlive its lease
				// unrenewed (it is not running yet) and be taken over, its attempt spent for nothing
				int reserved = reserve(this.settings.claimBatch());
				int limit = reserved;
				try {
					if (reserved > 0) {
						Instant now = this.host.clock().instant();
						claims = Observation.createNotStarted(A2Observations.CLAIM, this.host.observations())
							.parentObservation(drain)
							.lowCardinalityKeyValue(A2Observations.CONTRACT, key.contract())
							.highCardinalityKeyValue(A2Observations.SESSION, key.session())
							.observe(() -> this.work.claim(key.contract(), key.session(),
									this.consumerNames.getOrDefault(key.contract(), List.of()), now, now.plus(this.settings.lease()),
									limit, owner));
						this.outage.succeeded();
					}
					else {
						starve(key);
					}
					for (Claim claim : claims) {
						if (start(claim, owner)) {
							reserved--;
						}
					}
				}
				finally {
					// what this claim did not use goes to the sessions that found no permit free
					release(reserved);
				}
				synchronized (state) {
					// fewer claims than permits: the claim took everything runnable in the session then, and
					// whatever becomes runnable later asks again (an append's commit, a finish that unblocks a lane)
					boolean full = limit > 0 && claims.size() == limit;
					if (!full && !state.again) {
						// ended under the lock a request takes: a request from now on starts a new loop
						state.running = false;
						state.removed = true;
						break;
					}
					state.again = false;
				}
			}
		}
		catch (RuntimeException ex) {
			drain.error(ex);
			if (!this.outage.failed(ex)) {
				logger.warn("Draining session '" + key.session() + "' of contract '" + key.contract()
						+ "' failed; the sweep will try again", ex);
			}
		}
		drain.stop();
		endLoop(key, state);
	}

	/**
	 * Remembers a session that found no permit free, to be drained when one is released; checks again
	 * after, as a permit released meanwhile found the session not yet remembered.
	 */
	private void starve(SessionRef key) {
		if (this.starved.size() < LOOP_QUEUE && this.starved.add(key)) {
			this.starvedInOrder.add(key);
		}
		// beyond that many, the sweep finds the session in the database
		wakeStarved(this.permits.availablePermits());
	}

	/** Gives permits back and drains as many sessions that found none free. */
	private void release(int permits) {
		if (permits > 0) {
			this.permits.release(permits);
			wakeStarved(permits);
		}
	}

	private void wakeStarved(int sessions) {
		for (int i = 0; i < sessions; i++) {
			SessionRef next = this.starvedInOrder.poll();
			if (next == null) {
				return;
			}
			// out of the set before its loop starts: a loop that finds no permit again queues it at the end
			this.starved.remove(next);
			request(next, true);
		}
	}

	private void endLoop(SessionRef key, LoopState state) {
		synchronized (state) {
			state.running = false;
			state.removed = true;
		}
		this.loopStates.remove(key, state);
		this.finisher.signal();
	}

	/** Sessions whose loop is queued or running. */
	int draining() {
		return this.loopStates.size();
	}

	/** Takes up to {@code wanted} free run permits without waiting; answers how many it took. */
	private int reserve(int wanted) {
		int taken = 0;
		while (taken < wanted && this.permits.tryAcquire()) {
			taken++;
		}
		return taken;
	}

	/** Run permits for the units an append leases before it is sent; none while stopping. */
	int reserveAhead(int wanted) {
		return this.stopping ? 0 : reserve(wanted);
	}

	/** Starts the units an append stored leased, on the permits reserved for it; gives back the rest. */
	void startLeased(List<Claim> claims, int reserved, @Nullable Integer owner) {
		try {
			for (Claim claim : claims) {
				if (reserved > 0 && start(claim, owner)) {
					reserved--;
				}
			}
		}
		finally {
			release(reserved);
		}
	}

	/**
	 * Renews a run's claim now, for an append it makes after the end of its lease as this instance knows
	 * it: the lease's new end, or {@code null} when another attempt took the unit over (the run is aborted).
	 */
	private @Nullable Instant renewNow(Running run) {
		Instant until = this.host.clock().instant().plus(this.settings.lease());
		if (this.work.renew(List.of(run.claim), until).contains(run.claim.token())) {
			return until;
		}
		run.lost = true;
		this.host.abort(run.signal, new A2Exception(ErrorCode.SUPERSEDED_ATTEMPT,
				"the lease of this attempt lapsed and another attempt took the unit over"));
		return null;
	}

	/** Starts a claim on one of the permits the loop reserved; answers whether the run took it. */
	private boolean start(Claim claim, @Nullable Integer owner) {
		if (claim.events().isEmpty()) {
			// a cursor with no matching event left moves to its target
			this.finisher.add(new Running.Done(new Running(claim, null, this.host.newSignal()),
					Finish.completed(claim, List.of(), claim.target())));
			return false;
		}
		Consumer consumer = this.host.consumer(claim.contract(), claim.consumer());
		if (consumer == null) {
			return false;
		}
		Running run = new Running(claim, consumer, this.host.newSignal(), owner);
		// claimed a moment ago for the lease: until then (or a renewal) its appends are taken at once
		this.host.holdUntil(run.signal, this.host.clock().instant().plus(this.settings.lease()), () -> renewNow(run));
		// added before the identity is checked: a loss after the check finds it and marks it lost
		this.running.add(run);
		if (owner != null && !owner.equals(this.owner.get())) {
			// the identity it was claimed under was lost meanwhile: another instance takes the claim over
			this.running.remove(run);
			return false;
		}
		try {
			this.runs.execute(() -> run(run));
			this.finisher.signal();
			return true;
		}
		catch (RejectedExecutionException ex) {
			this.running.remove(run);
			return false;
		}
	}

	private void run(Running run) {
		Finish finish = null;
		try {
			finish = this.execution.execute(run);
		}
		finally {
			release(1);
		}
		this.finisher.add(new Running.Done(run, finish));
	}

	private static final class LoopState {

		boolean running;

		boolean again;

		boolean removed;

	}

}
