package dev.a2;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Tells a consumer run that its attempt should stop: it was superseded ({@code SUPERSEDED_ATTEMPT}),
 * its lease lapsed ({@code CLAIM_EXPIRED}), an {@code abortOn} event arrived, or the session was
 * cleared. Code checks {@link #isAborted()}, calls {@link #throwIfAborted()} between steps, or
 * registers a callback; the thread of the run is interrupted too, so blocking calls end (but not a
 * call of its {@link RunSession} under way, which gets the interrupt when it returns).
 */
public final class AbortSignal {

	private final List<Runnable> callbacks = new ArrayList<>();

	private @Nullable A2Exception reason;

	private @Nullable Thread thread;

	/** How many of A2's store calls run on the bound thread now ({@link #uninterrupted}). */
	private int storeCalls;

	/** Whether the abort's interrupt waits for the bound thread's store calls to end. */
	private boolean interruptHeld;

	/**
	 * Until when the attempt's claim is held for sure, as far as this instance knows: its lease as last
	 * claimed or renewed ({@link Instant#MAX} outside a run of A2's drainer).
	 */
	private volatile Instant heldUntil = Instant.MAX;

	/**
	 * Renews the attempt's claim now: the lease's new end, or {@code null} when another attempt took the
	 * unit over (then it aborts this signal). {@code null} outside a run of A2's drainer.
	 */
	private volatile @Nullable Supplier<@Nullable Instant> renew;

	/** Whether the attempt was aborted. */
	public synchronized boolean isAborted() {
		return this.reason != null;
	}

	/** Why the attempt was aborted, or {@code null} while it was not. */
	public synchronized @Nullable A2Exception reason() {
		return this.reason;
	}

	/** Throws the reason when the attempt was aborted. */
	public void throwIfAborted() {
		A2Exception reason = reason();
		if (reason != null) {
			throw reason;
		}
	}

	/** Runs {@code callback} when the attempt is aborted (at once when it already was). */
	public void onAbort(Runnable callback) {
		synchronized (this) {
			if (this.reason == null) {
				this.callbacks.add(callback);
				return;
			}
		}
		callback.run();
	}

	/**
	 * Aborts, once; later calls keep the first reason. A2 aborts the signals of its runs; a test that
	 * runs a consumer's code itself aborts its own to see how the code stops.
	 */
	public void abort(A2Exception reason) {
		List<Runnable> toRun;
		synchronized (this) {
			if (this.reason != null) {
				return;
			}
			this.reason = reason;
			toRun = new ArrayList<>(this.callbacks);
			this.callbacks.clear();
		}
		for (Runnable callback : toRun) {
			try {
				callback.run();
			}
			catch (RuntimeException ex) {
				// a callback's failure must not keep the others from running
			}
		}
		synchronized (this) {
			// under the lock, as uninterrupted counts its calls: an interrupt is either delivered before a
			// store call clears it, or held until the call has ended, never sent into one
			if (this.thread != null) {
				if (this.storeCalls > 0) {
					this.interruptHeld = true;
				}
				else {
					this.thread.interrupt();
				}
			}
		}
	}

	/**
	 * The attempt's claim is held until {@code until} (claimed or renewed so), unless aborted meanwhile;
	 * {@code renew} renews it at once ({@code null}: keeps the one given before).
	 */
	void holdUntil(Instant until, @Nullable Supplier<@Nullable Instant> renew) {
		this.heldUntil = until;
		if (renew != null) {
			this.renew = renew;
		}
	}

	/**
	 * Refuses a write of the run's once another attempt may run its unit. An instance that stalled (a long
	 * pause, a frozen VM) past its lease wakes up with its runs' threads going on before its heartbeat has
	 * found the claims lost, and what such an attempt appended landed among the new attempt's events, after
	 * the reply's end. So a write after the lease's known end renews the claim first, and is refused when
	 * another attempt took the unit over meanwhile.
	 */
	void checkHeld(Instant now) {
		A2Exception reason = reason();
		if (reason != null
				&& (reason.code() == ErrorCode.SUPERSEDED_ATTEMPT || reason.code() == ErrorCode.CLAIM_EXPIRED)) {
			// an abort for an abortOn event or a clear leaves the run its last writes (a reply's end); one that
			// lost the claim does not: another attempt runs the unit
			throw new A2Exception(reason.code(), reason.getMessage() + "; nothing is appended");
		}
		Supplier<@Nullable Instant> renewer = this.renew;
		if (renewer == null || !now.isAfter(this.heldUntil)) {
			return;
		}
		Instant renewed = renewer.get();
		if (renewed == null) {
			A2Exception lost = reason();
			throw new A2Exception((lost != null) ? lost.code() : ErrorCode.SUPERSEDED_ATTEMPT,
					"the lease of this attempt lapsed (the instance stalled, or could not reach the database), and "
							+ "another attempt took the unit over; nothing is appended");
		}
		this.heldUntil = renewed;
	}

	synchronized void bind(@Nullable Thread thread) {
		this.thread = thread;
		this.storeCalls = 0;
		this.interruptHeld = false;
	}

	/**
	 * Runs one of A2's store calls (an append, a read) made on the run's thread without the abort's
	 * interrupt, which it keeps for after the call. On a virtual thread (runs use them on Java 21+) an
	 * interrupt closes the socket a blocking read waits on: the call failed as {@code STORE_UNAVAILABLE},
	 * its connection was lost, a group-commit round of other callers' appends the run's thread led failed
	 * with it, and a stopped reply could not write its end. Code of the run's own still gets the
	 * interrupt, at once if it blocks outside A2's calls, so that blocking calls end.
	 */
	<T> T uninterrupted(Supplier<T> call) {
		boolean bound;
		synchronized (this) {
			if (this.thread != Thread.currentThread()) {
				// another thread of the run's code (called outside the lock): the abort does not interrupt it
				bound = false;
			}
			else {
				this.storeCalls++;
				bound = true;
			}
		}
		if (!bound) {
			return call.get();
		}
		boolean interrupted = Thread.interrupted();
		try {
			return call.get();
		}
		finally {
			synchronized (this) {
				this.storeCalls--;
				if (this.storeCalls == 0 && this.interruptHeld) {
					this.interruptHeld = false;
					interrupted = true;
				}
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
