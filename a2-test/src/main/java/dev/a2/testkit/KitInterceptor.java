package dev.a2.testkit;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.a2.A2Exception;
import dev.a2.DrainActivity;
import dev.a2.DrainSettings;
import dev.a2.ErrorCode;
import dev.a2.NonRetriableException;
import dev.a2.RunInterceptor;
import org.jspecify.annotations.Nullable;

/**
 * The kit's hook around every run: it writes the journal and applies the faults a test asked for,
 * in the order asked, per consumer.
 */
final class KitInterceptor implements RunInterceptor {

	private final Clock clock;

	private final Supplier<DrainSettings> settings;

	private final Runnable changed;

	private final RunJournal journal = new RunJournal();

	/** By consumer, as {@code "contract/name"}. */
	private final Map<String, Deque<Fault>> faults = new HashMap<>();

	private final List<StalledRun> stalls = new ArrayList<>();

	KitInterceptor(Clock clock, Supplier<DrainSettings> settings, Runnable changed) {
		this.clock = clock;
		this.settings = settings;
		this.changed = changed;
	}

	RunJournal journal() {
		return this.journal;
	}

	synchronized void add(String consumer, Fault fault) {
		this.faults.computeIfAbsent(consumer, (c) -> new ArrayDeque<>()).add(fault);
	}

	private synchronized @Nullable Fault nextFault(String consumer) {
		Deque<Fault> queue = this.faults.get(consumer);
		return (queue != null) ? queue.poll() : null;
	}

	/** Puts a fault back as the consumer's next. */
	private synchronized void putBack(String consumer, Fault fault) {
		this.faults.computeIfAbsent(consumer, (c) -> new ArrayDeque<>()).addFirst(fault);
	}

	/** Faults asked for that no run took yet. */
	synchronized Map<String, List<Fault>> unusedFaults() {
		Map<String, List<Fault>> unused = new HashMap<>();
		this.faults.forEach((consumer, queue) -> {
			if (!queue.isEmpty()) {
				unused.put(consumer, List.copyOf(queue));
			}
		});
		return unused;
	}

	/** Forgets the faults and the journal, and lets stalled runs go. */
	void reset() {
		synchronized (this) {
			this.faults.clear();
		}
		this.journal.clear();
		releaseAll();
	}

	void releaseAll() {
		List<StalledRun> released;
		synchronized (this.stalls) {
			released = List.copyOf(this.stalls);
			this.stalls.clear();
		}
		released.forEach(StalledRun::release);
		this.changed.run();
	}

	/** Whether that running attempt is one the kit holds stalled. */
	boolean isStalled(DrainActivity.RunningAttempt attempt) {
		synchronized (this.stalls) {
			return this.stalls.stream().anyMatch((stall) -> stall.is(attempt));
		}
	}

	List<String> stalled() {
		synchronized (this.stalls) {
			return this.stalls.stream().map(StalledRun::toString).toList();
		}
	}

	@Override
	public @Nullable Object intercept(Invocation run) throws Exception {
		String consumer = run.consumer().contract() + "/" + run.consumer().name();
		RunJournal.Entry entry = this.journal.start(new RunRecord(run.consumer().contract(), run.consumer().name(),
				run.session(), run.event().index(), run.attempt(), this.clock.instant(), RunOutcome.RUNNING, null, null,
				false));
		this.changed.run();
		releaseTakenOver(run);
		Fault fault = nextFault(consumer);
		if (fault instanceof Fault.Fail && run.events().size() > 1) {
			// a batch that throws is split, which is no failure: the run of the batch's first event alone,
			// next, takes the fault, so that failNext(n) makes n failures (back-offs, a dead letter)
			putBack(consumer, fault);
		}
		if (fault instanceof Fault.Stall) {
			entry.stalled();
			stall(run);
		}
		try {
			if (fault instanceof Fault.Fail fail) {
				throw fail.exception();
			}
			Object result = run.proceed();
			if (fault instanceof Fault.Crash) {
				run.abandon();
				entry.end(RunOutcome.CRASHED, null, null);
				return result;
			}
			entry.end(RunOutcome.COMPLETED, null, null);
			// an abortOn or a clear during the run, or a finish refused later because another attempt took over
			run.signal().onAbort(() -> {
				A2Exception reason = run.signal().reason();
				boolean superseded = reason != null && reason.code() == ErrorCode.SUPERSEDED_ATTEMPT;
				entry.end(superseded ? RunOutcome.SUPERSEDED : RunOutcome.ABORTED, null, null);
			});
			return result;
		}
		catch (Exception ex) {
			String error = ex.getClass().getSimpleName() + ": " + ex.getMessage();
			if (run.signal().isAborted()) {
				// a zombie whose write was refused as another attempt took its unit over is superseded
				A2Exception reason = run.signal().reason();
				boolean superseded = reason != null && reason.code() == ErrorCode.SUPERSEDED_ATTEMPT;
				entry.end(superseded ? RunOutcome.SUPERSEDED : RunOutcome.ABORTED, null, error);
			}
			else if (run.events().size() > 1) {
				entry.end(RunOutcome.SPLIT, null, error);
			}
			else {
				DrainSettings drain = this.settings.get();
				int failures = run.failures() + 1;
				boolean dead = failures >= drain.maxFailures() || ex instanceof NonRetriableException;
				Duration backOff = dead ? null : drain.retryDelay(failures);
				entry.end(dead ? RunOutcome.DEAD_LETTERED : RunOutcome.FAILED, backOff, error);
			}
			throw ex;
		}
	}

	private void stall(Invocation run) {
		StalledRun stall = new StalledRun(run.consumer().contract(), run.session(), run.consumer().name(),
				run.events().get(0).index(), run.event().index(), run.attempt());
		synchronized (this.stalls) {
			this.stalls.add(stall);
		}
		this.changed.run();
		stall.await();
	}

	/**
	 * A later attempt's run of an event a stalled attempt holds means the unit was taken over: the zombie
	 * may go on now. A batch taken over may have grown (events appended while the instance was frozen).
	 */
	private void releaseTakenOver(Invocation run) {
		List<StalledRun> released = new ArrayList<>();
		long first = run.events().get(0).index();
		long last = run.event().index();
		synchronized (this.stalls) {
			this.stalls.removeIf((stall) -> {
				boolean takenOver = stall.contract.equals(run.consumer().contract())
						&& stall.consumer.equals(run.consumer().name()) && stall.session.equals(run.session())
						&& first <= stall.index && last >= stall.first && stall.attempt < run.attempt();
				if (takenOver) {
					released.add(stall);
				}
				return takenOver;
			});
		}
		released.forEach(StalledRun::release);
	}

	/** What the kit does to a consumer's next run. */
	sealed interface Fault {

		/** The run throws {@code exception} without running the code. */
		record Fail(Exception exception) implements Fault {
		}

		/** The code runs, then the instance "dies": the finish is lost and the lease lapses. */
		record Crash() implements Fault {
		}

		/** The run stops before its code, as its instance froze, until another attempt takes the unit over. */
		record Stall() implements Fault {
		}

	}

	private static final class StalledRun {

		final String contract;

		final String session;

		final String consumer;

		/** The index of the batch's first event; {@link #index} for a run of one event. */
		final long first;

		/** The index of the (batch's last) event it runs for, as {@link DrainActivity.RunningAttempt#index()}. */
		final long index;

		final int attempt;

		private boolean released;

		StalledRun(String contract, String session, String consumer, long first, long index, int attempt) {
			this.contract = contract;
			this.session = session;
			this.consumer = consumer;
			this.first = first;
			this.index = index;
			this.attempt = attempt;
		}

		boolean is(DrainActivity.RunningAttempt running) {
			return running.contract().equals(this.contract) && running.session().equals(this.session)
					&& running.consumer().equals(this.consumer) && running.index() == this.index
					&& running.attempt() == this.attempt;
		}

		synchronized void await() {
			while (!this.released) {
				try {
					wait();
				}
				catch (InterruptedException ex) {
					// the drainer is stopping: the frozen instance goes away with it
					Thread.currentThread().interrupt();
					return;
				}
			}
		}

		synchronized void release() {
			this.released = true;
			notifyAll();
		}

		@Override
		public String toString() {
			return this.consumer + " on " + this.contract + "/" + this.session + " #" + this.index + " (attempt "
					+ this.attempt + ", stalled)";
		}

	}

}
