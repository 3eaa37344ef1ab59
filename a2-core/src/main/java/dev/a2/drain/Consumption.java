package dev.a2.drain;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import dev.a2.A2Exception;
import dev.a2.A2Observations;
import dev.a2.Consumer;
import dev.a2.ErrorCode;
import dev.a2.Lane;
import dev.a2.store.WorkStore;
import dev.a2.store.WorkStore.CursorState;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * {@code consume}, read your writes: drives a fixed-lane consumer's cursor in a session until it is
 * past a goal, waiting (25 ms doubling to 1 s) while another instance holds it or it backs off, and
 * refusing at once a cycle of consumers waiting on each other.
 */
final class Consumption {

	private final DrainHost host;

	private final WorkStore work;

	private final Object progress;

	private final BiConsumer<String, String> drain;

	/** Which consumer (contract/session/consumer) a consume call waits for, to refuse cycles at once. */
	private final Map<String, String> waitsFor = new HashMap<>();

	Consumption(DrainHost host, WorkStore work, Object progress, BiConsumer<String, String> drain) {
		this.host = host;
		this.work = work;
		this.progress = progress;
		this.drain = drain;
	}

	long consume(String contract, String session, String consumerName, @Nullable Long through, @Nullable String caller) {
		Long reached = Observation.createNotStarted(A2Observations.CONSUME, this.host.observations())
			.lowCardinalityKeyValue(A2Observations.CONTRACT, contract)
			.lowCardinalityKeyValue(A2Observations.CONSUMER, consumerName)
			.highCardinalityKeyValue(A2Observations.SESSION, session)
			.observe(() -> consumeObserved(contract, session, consumerName, through, caller));
		return (reached != null) ? reached : 0;
	}

	private long consumeObserved(String contract, String session, String consumerName, @Nullable Long through,
			@Nullable String caller) {
		Consumer consumer = this.host.consumer(contract, consumerName);
		if (consumer == null || !(consumer.lane() instanceof Lane.Fixed)) {
			throw new IllegalArgumentException("consume needs a consumer with a fixed lane; '" + consumerName
					+ "' of contract '" + contract + "' is " + ((consumer == null) ? "not registered" : "not one"));
		}
		if (consumerName.equals(caller)) {
			throw new IllegalStateException("consumer '" + caller + "' may not consume itself: it would wait for its own run");
		}
		// past the head is the head: what it answers is an index reached, and waiting for events that
		// may never be appended would be a wait with no end
		long head = this.host.head(contract, session);
		long goal = (through != null) ? Math.min(through, head) : head;
		String waiter = (caller != null) ? key(contract, session, caller) : null;
		if (waiter != null) {
			waitFor(waiter, key(contract, session, consumerName));
		}
		try {
			long delay = 25;
			boolean backfilled = false;
			while (true) {
				CursorState cursor = this.work.cursor(contract, session, consumerName);
				if (cursor == null && consumer.backfill() && !backfilled) {
					// a session the sweep's walk has not reached yet: its events before the consumer are its too
					this.work.backfill(contract, session, consumerName, consumer.types());
					backfilled = true;
					continue;
				}
				if (cursor == null) {
					return goal;
				}
				if (cursor.position() >= goal) {
					return cursor.position();
				}
				if (!cursor.dead() && cursor.position() >= cursor.target()) {
					// every matching event through the goal is processed
					return goal;
				}
				if (cursor.failedIndex() != null && cursor.failedIndex() > goal) {
					// the event the cursor failed on (dead, or waiting out its back-off) is its next one, after the
					// goal: every matching event through the goal is processed, and what comes later is not asked for
					return goal;
				}
				if (cursor.dead()) {
					throw new A2Exception(ErrorCode.CONSUMER_DEAD_LETTERED, "consumer '" + consumerName
							+ "' is dead-lettered at event " + cursor.failedIndex() + " of session '" + session
							+ "'; redrive it (retry or skip) before consuming");
				}
				this.drain.accept(contract, session);
				synchronized (this.progress) {
					this.progress.wait(delay);
				}
				delay = Math.min(delay * 2, 1000);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new A2Exception(ErrorCode.ABORTED, "interrupted while consuming '" + consumerName + "'", ex);
		}
		finally {
			if (waiter != null) {
				synchronized (this.waitsFor) {
					this.waitsFor.remove(waiter);
				}
			}
		}
	}

	private void waitFor(String waiter, String waited) {
		synchronized (this.waitsFor) {
			List<String> chain = new ArrayList<>(List.of(waiter, waited));
			for (String next = this.waitsFor.get(waited); next != null; next = this.waitsFor.get(next)) {
				chain.add(next);
				if (next.equals(waiter)) {
					throw new IllegalStateException("consumers would wait on each other for ever: " + String.join(" → ", chain));
				}
			}
			this.waitsFor.put(waiter, waited);
		}
	}

	private static String key(String contract, String session, String consumer) {
		return contract + "/" + session + "/" + consumer;
	}

}
