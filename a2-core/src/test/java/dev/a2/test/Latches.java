package dev.a2.test;

import java.util.concurrent.CountDownLatch;

/** Waits of a test's own that an abort's interrupt must not end. */
public final class Latches {

	private Latches() {
	}

	/** Waits for {@code latch} through interrupts, and leaves the thread interrupted if it was. */
	public static void awaitIgnoringInterrupts(CountDownLatch latch) {
		boolean interrupted = false;
		while (true) {
			try {
				latch.await();
				break;
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

}
