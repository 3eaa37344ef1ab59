package dev.a2;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Tells a consumer run that its attempt should stop: it was superseded ({@code SUPERSEDED_ATTEMPT}),
 * its lease lapsed ({@code CLAIM_EXPIRED}), an {@code abortOn} event arrived, or the session was
 * cleared. Code checks {@link #isAborted()}, calls {@link #throwIfAborted()} between steps, or
 * registers a callback; the thread of the run is interrupted too, so blocking calls end.
 */
public final class AbortSignal {

	private final List<Runnable> callbacks = new ArrayList<>();

	private @Nullable A2Exception reason;

	private @Nullable Thread thread;

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
		Thread running;
		synchronized (this) {
			if (this.reason != null) {
				return;
			}
			this.reason = reason;
			toRun = new ArrayList<>(this.callbacks);
			this.callbacks.clear();
			running = this.thread;
		}
		for (Runnable callback : toRun) {
			try {
				callback.run();
			}
			catch (RuntimeException ex) {
				// a callback's failure must not keep the others from running
			}
		}
		if (running != null) {
			running.interrupt();
		}
	}

	synchronized void bind(@Nullable Thread thread) {
		this.thread = thread;
	}

}
