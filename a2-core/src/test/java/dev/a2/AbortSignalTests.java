package dev.a2;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.test.Latches;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An abort interrupts the run's thread, but never while one of A2's store calls runs on it: on a
 * virtual thread (Java 21+) the interrupt closed the socket the call waited on, and the call failed as
 * {@code STORE_UNAVAILABLE} (a stopped reply lost its end; found by the Java 25 trial). These tests hold
 * on any Java: they watch the thread's interrupt status, which is what a virtual thread's socket acts on.
 */
class AbortSignalTests {

	private static final A2Exception STOPPED = new A2Exception(ErrorCode.ABORTED, "stopped");

	@Test
	void anAbortDuringAStoreCallInterruptsTheRunsThreadOnceTheCallHasEnded() throws Exception {
		AbortSignal signal = new AbortSignal();
		CountDownLatch inCall = new CountDownLatch(1);
		CountDownLatch aborted = new CountDownLatch(1);
		AtomicBoolean interruptedInCall = new AtomicBoolean(true);
		AtomicBoolean interruptedAfter = new AtomicBoolean();
		Thread run = new Thread(() -> {
			signal.bind(Thread.currentThread());
			signal.uninterrupted(() -> {
				inCall.countDown();
				Latches.awaitIgnoringInterrupts(aborted);
				interruptedInCall.set(Thread.currentThread().isInterrupted());
				return null;
			});
			interruptedAfter.set(Thread.currentThread().isInterrupted());
			signal.bind(null);
		});
		run.start();
		assertThat(inCall.await(10, TimeUnit.SECONDS)).isTrue();
		signal.abort(STOPPED);
		aborted.countDown();
		run.join(TimeUnit.SECONDS.toMillis(10));

		assertThat(interruptedInCall).as("interrupted during the store call").isFalse();
		assertThat(interruptedAfter).as("interrupted after it").isTrue();
	}

	@Test
	void anInterruptFromBeforeAStoreCallIsKeptForAfterIt() throws Exception {
		AbortSignal signal = new AbortSignal();
		AtomicReference<Boolean> interruptedInCall = new AtomicReference<>();
		AtomicBoolean interruptedAfter = new AtomicBoolean();
		CountDownLatch bound = new CountDownLatch(1);
		CountDownLatch aborted = new CountDownLatch(1);
		Thread run = new Thread(() -> {
			signal.bind(Thread.currentThread());
			bound.countDown();
			Latches.awaitIgnoringInterrupts(aborted);
			signal.uninterrupted(() -> {
				interruptedInCall.set(Thread.currentThread().isInterrupted());
				return null;
			});
			interruptedAfter.set(Thread.interrupted());
			signal.bind(null);
		});
		run.start();
		assertThat(bound.await(10, TimeUnit.SECONDS)).isTrue();
		signal.abort(STOPPED);
		aborted.countDown();
		run.join(TimeUnit.SECONDS.toMillis(10));

		assertThat(interruptedInCall.get()).as("interrupted during the store call").isFalse();
		assertThat(interruptedAfter).as("interrupted after it").isTrue();
	}

	@Test
	void anAbortWithNoStoreCallUnderWayInterruptsTheRunsThreadAtOnce() throws Exception {
		AbortSignal signal = new AbortSignal();
		CountDownLatch bound = new CountDownLatch(1);
		AtomicBoolean woken = new AtomicBoolean();
		// a blocking call of the run's own: a wait that only the abort's interrupt ends
		CountDownLatch never = new CountDownLatch(1);
		Thread run = new Thread(() -> {
			signal.bind(Thread.currentThread());
			bound.countDown();
			try {
				never.await();
			}
			catch (InterruptedException ex) {
				woken.set(true);
			}
			signal.bind(null);
		});
		run.start();
		assertThat(bound.await(10, TimeUnit.SECONDS)).isTrue();
		signal.abort(STOPPED);
		run.join(TimeUnit.SECONDS.toMillis(10));

		assertThat(woken).as("the run's blocking call ended").isTrue();
	}

}
