package dev.a2;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.a2.TestContracts.note;

/**
 * Consumer {@code worker} of {@code message.sent} whose first attempts each block until aborted (an
 * instance stopping or crashing under them) and whose later ones return a note: for tests that count
 * the attempts a unit takes across instances.
 */
final class AttemptsThatBlock {

	/** The attempt numbers the runs were given, in order. */
	final List<Integer> attempts = new CopyOnWriteArrayList<>();

	final Consumer consumer;

	private final List<CountDownLatch> started = new ArrayList<>();

	/** The first {@code blocking} attempts block. */
	AttemptsThatBlock(int blocking) {
		for (int i = 0; i < blocking; i++) {
			this.started.add(new CountDownLatch(1));
		}
		this.consumer = Consumer.builder("chat", "worker").types("message.sent").run((context) -> {
			this.attempts.add(context.attempt());
			if (context.attempt() <= this.started.size()) {
				this.started.get(context.attempt() - 1).countDown();
				TestContracts.blockUntilAborted();
			}
			return note("done");
		});
	}

	/** Whether attempt {@code attempt} (from 1) started within 20 s. */
	boolean started(int attempt) throws InterruptedException {
		return this.started.get(attempt - 1).await(20, TimeUnit.SECONDS);
	}

}
