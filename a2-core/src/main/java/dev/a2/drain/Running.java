package dev.a2.drain;

import dev.a2.AbortSignal;
import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.live.SessionChanges;
import dev.a2.store.Claim;
import dev.a2.store.Finish;
import org.jspecify.annotations.Nullable;

/** An attempt running on this instance: its claim, its consumer, its signal. */
final class Running {

	/** {@link #startedAfter} while the current event's start is being decided. */
	static final long DECIDING = Long.MAX_VALUE;

	final Claim claim;

	final @Nullable Consumer consumer;

	final AbortSignal signal;

	volatile boolean lost;

	/** The event being run (a cursor runs several in turn). */
	volatile @Nullable Event current;

	/**
	 * The last index of the session when the current event's run started: an abort event at or before
	 * it was decided before the start, and only one after it aborts the run ({@link #DECIDING} while
	 * that is being decided). Guarded by {@code this}, with {@link #abortArrived}.
	 */
	long startedAfter = DECIDING;

	/** Whether an abort event may have arrived while the start was being decided: the log is read again. */
	boolean abortArrived;

	/** What aborted the run (abortOn or a clear), for its log line and observation. */
	volatile @Nullable Abort abortedBy;

	/** The instance identity the claim was made under ({@code null}: none, its lease alone holds it). */
	final @Nullable Integer owner;

	/**
	 * Ends the run's follow of its session: a run that abortOn events stop follows it, so that other
	 * instances tell it their events at once.
	 */
	private volatile @Nullable AutoCloseable following;

	Running(Claim claim, @Nullable Consumer consumer, AbortSignal signal) {
		this(claim, consumer, signal, null);
	}

	Running(Claim claim, @Nullable Consumer consumer, AbortSignal signal, @Nullable Integer owner) {
		this.claim = claim;
		this.consumer = consumer;
		this.signal = signal;
		this.owner = owner;
	}

	/** Follows the run's session if its consumer has abortOn events ({@link RunningAttempts#add}). */
	void follow(SessionChanges changes) {
		if (this.consumer != null && !this.consumer.abortOn().isEmpty()) {
			this.following = changes.follow(this.claim.contract(), this.claim.session());
		}
	}

	/** Ends the follow, once the run is no longer running here ({@link RunningAttempts#remove}). */
	void unfollow() {
		AutoCloseable following = this.following;
		if (following != null) {
			this.following = null;
			try {
				following.close();
			}
			catch (Exception ex) {
				// nothing to release
			}
		}
	}

	/** The event of the session that aborted a run: an abortOn event, or a clear marker. */
	record Abort(String type, long index) {
	}

	/** An attempt that ended, and how ({@code null}: nothing to write, its claim lapses or was released). */
	record Done(Running run, @Nullable Finish finish) {
	}

}
