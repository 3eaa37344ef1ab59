package dev.a2.drain;

import dev.a2.AbortSignal;
import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.store.Claim;
import dev.a2.store.Finish;
import org.jspecify.annotations.Nullable;

/** An attempt running on this instance: its claim, its consumer, its signal. */
final class Running {

	final Claim claim;

	final @Nullable Consumer consumer;

	final AbortSignal signal;

	volatile boolean lost;

	/** The event being run (a cursor runs several in turn). */
	volatile @Nullable Event current;

	Running(Claim claim, @Nullable Consumer consumer, AbortSignal signal) {
		this.claim = claim;
		this.consumer = consumer;
		this.signal = signal;
	}

	/** An attempt that ended, and how ({@code null}: nothing to write, its claim lapses or was released). */
	record Done(Running run, @Nullable Finish finish) {
	}

}
