package dev.a2.test;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Threads for a test's blocking calls that must run at the same time (two transactions, one waiting
 * for the other's rows). {@code CompletableFuture}'s default pool is no place for them: with one
 * worker (on 2 CPUs), it runs them one after the other, and on Java 25 even when it was given more
 * threads before, so the second call never starts while the first waits for it.
 */
public final class AtOnce {

	private static final ExecutorService THREADS = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "test-at-once");
		thread.setDaemon(true);
		return thread;
	});

	private AtOnce() {
	}

	/** A thread of its own for every task, idle ones reused. */
	public static Executor threads() {
		return THREADS;
	}

}
