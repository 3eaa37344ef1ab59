package dev.a2.drain;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import dev.a2.A2Exception;
import dev.a2.A2Observations;
import dev.a2.ErrorCode;
import dev.a2.live.SessionChange;
import dev.a2.store.Claim;
import dev.a2.store.Finish;
import dev.a2.store.WorkStore;
import dev.a2.store.WorkStore.SessionRef;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Writes how attempts ended, many in one transaction, on a thread of its own: the finishes of
 * attempts that still hold their claims commit with the events they returned; the others are told
 * they were superseded. Then the sessions are drained again, and waiters on progress wake.
 */
final class Finisher {

	private static final Log logger = LogFactory.getLog(Drainer.class);

	private static final int FINISH_BATCH = 256;

	private final DrainHost host;

	private final WorkStore work;

	private final RunningAttempts running;

	private final BlockingQueue<Running.Done> done = new LinkedBlockingQueue<>();

	private final Thread completer;

	/**
	 * Notified after each batch, and whenever the drainer's activity changes: {@code consume},
	 * {@code stop} and {@link Drainer#await} wait on it.
	 */
	final Object progress = new Object();

	/** Attempts added and not yet written, the sessions they touched not yet asked to drain again. */
	private final AtomicInteger unwritten = new AtomicInteger();

	private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

	private volatile BiConsumer<String, String> drainAgain = (contract, session) -> {
	};

	private volatile BiConsumer<String, String> returnedTo = (contract, session) -> {
	};

	private volatile boolean halted;

	Finisher(DrainHost host, WorkStore work, RunningAttempts running) {
		this.host = host;
		this.work = work;
		this.running = running;
		this.completer = Drainer.daemon(() -> "a2-completer").newThread(this::complete);
	}

	/**
	 * Starts writing; {@code drainAgain} is asked to drain each session a batch touched, and
	 * {@code returnedTo} is told each session that runs returned events into.
	 */
	void start(BiConsumer<String, String> drainAgain, BiConsumer<String, String> returnedTo) {
		this.drainAgain = drainAgain;
		this.returnedTo = returnedTo;
		this.completer.start();
	}

	void add(Running.Done ended) {
		this.unwritten.incrementAndGet();
		this.done.add(ended);
	}

	boolean idle() {
		return this.unwritten.get() == 0;
	}

	/** How many ended attempts wait for their finish to be written. */
	int unwritten() {
		return this.unwritten.get();
	}

	/** Wakes whoever waits on the drainer's progress, and tells the listeners. */
	void signal() {
		synchronized (this.progress) {
			this.progress.notifyAll();
		}
		for (Runnable listener : this.listeners) {
			try {
				listener.run();
			}
			catch (RuntimeException ex) {
				logger.warn("A listener of the drainer's progress failed", ex);
			}
		}
	}

	void addListener(Runnable listener) {
		this.listeners.add(listener);
	}

	void halt() {
		this.halted = true;
		this.completer.interrupt();
	}

	private void complete() {
		List<Running.Done> batch = new ArrayList<>();
		while (!this.halted) {
			try {
				Running.Done first = this.done.poll(100, TimeUnit.MILLISECONDS);
				if (first == null) {
					continue;
				}
				batch.clear();
				batch.add(first);
				this.done.drainTo(batch, FINISH_BATCH - 1);
				write(batch);
				this.unwritten.addAndGet(-batch.size());
				signal();
			}
			catch (InterruptedException ex) {
				if (this.halted) {
					return;
				}
			}
			catch (RuntimeException ex) {
				// the claims lapse and other attempts take over: at least once, never lost
				logger.warn("Could not record " + batch.size() + " finished consumer attempt(s); they will run again", ex);
				batch.forEach((d) -> this.running.remove(d.run()));
				this.unwritten.addAndGet(-batch.size());
				signal();
			}
		}
	}

	private void write(List<Running.Done> batch) {
		List<Finish> finishes = new ArrayList<>(batch.size());
		for (Running.Done d : batch) {
			if (d.finish() != null && !d.run().lost) {
				finishes.add(d.finish());
			}
		}
		Set<UUID> accepted = this.halted ? Set.of()
				: Observation.createNotStarted(A2Observations.COMMIT, this.host.observations())
					.observe(() -> this.work.finish(finishes, this.host.clock().instant()));
		Set<SessionRef> sessions = new LinkedHashSet<>();
		Map<SessionRef, SessionChange.Kind> appended = new HashMap<>();
		for (Running.Done d : batch) {
			Running run = d.run();
			this.running.remove(run);
			SessionRef session = new SessionRef(run.claim.contract(), run.claim.session());
			if (d.finish() != null && !accepted.contains(run.claim.token())) {
				this.host.abort(run.signal, new A2Exception(ErrorCode.SUPERSEDED_ATTEMPT,
						"another attempt took over this unit; nothing this attempt returned was committed"));
			}
			else if (d.finish() != null && !d.finish().events().isEmpty()) {
				boolean work = d.finish().events().stream().anyMatch((event) -> !event.work().isEmpty());
				appended.merge(session, work ? SessionChange.Kind.WORK : SessionChange.Kind.EVENTS,
						(a, b) -> (a == SessionChange.Kind.WORK) ? a : b);
			}
			if (mayUnblock(d)) {
				sessions.add(session);
			}
		}
		// the events runs returned are in the logs now: streams here and elsewhere read them
		appended.forEach((session, kind) -> {
			this.host.changes().publish(kind, session.contract(), session.session());
			this.returnedTo.accept(session.contract(), session.session());
		});
		// the sessions are asked to drain again before waiters wake, so that none of them sees an idle
		// drainer while a lane's next unit waits to be claimed
		sessions.forEach((s) -> this.drainAgain.accept(s.contract(), s.session()));
	}

	/**
	 * Whether writing this finish can make more of its session's work claimable: the next unit of a
	 * keyed lane or a cursor's next events, a retry, work the run returned. A completed unit of an
	 * independent lane unblocks nothing (its session's other units were claimable beside it), so its
	 * session is not claimed again for nothing on every run.
	 */
	private static boolean mayUnblock(Running.Done done) {
		Finish finish = done.finish();
		Claim claim = done.run().claim;
		return finish == null || claim.cursor() || claim.laneKey() != null || !finish.isCompleted()
				|| finish.events().stream().anyMatch((event) -> !event.work().isEmpty());
	}

}
