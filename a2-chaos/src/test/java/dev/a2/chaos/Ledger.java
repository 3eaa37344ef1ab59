package dev.a2.chaos;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the writers were told: every event of a push answered with 2xx, at the index the answer
 * gave, and how the other tries went. Only acknowledged pushes are promised to be stored.
 */
final class Ledger {

	/** An acknowledged event. */
	record Ack(String session, String id, long index) {
	}

	private final Map<String, Ack> acks = new ConcurrentHashMap<>();

	private final AtomicLong pushes = new AtomicLong();

	private final AtomicLong retries = new AtomicLong();

	private final AtomicLong unavailable = new AtomicLong();

	private final AtomicLong unreachable = new AtomicLong();

	private final Map<String, AtomicLong> unexpected = new ConcurrentSkipListMap<>();

	void acknowledged(Ack ack) {
		Ack earlier = this.acks.putIfAbsent(ack.session() + "/" + ack.id(), ack);
		if (earlier != null && earlier.index() != ack.index()) {
			// a retry answered with another index than the first answer: a promise broken at once
			unexpected("acknowledged twice at different indexes: " + earlier + " and " + ack);
		}
	}

	void pushed() {
		this.pushes.incrementAndGet();
	}

	void retried() {
		this.retries.incrementAndGet();
	}

	/** A 503 {@code STORE_UNAVAILABLE}: the push changed nothing and is tried again. */
	void unavailable() {
		this.unavailable.incrementAndGet();
	}

	/** No answer at all (connection refused or cut, a timeout): the push may or may not be stored. */
	void unreachable() {
		this.unreachable.incrementAndGet();
	}

	void unexpected(String what) {
		this.unexpected.computeIfAbsent(what.length() > 300 ? what.substring(0, 300) : what, (k) -> new AtomicLong())
			.incrementAndGet();
	}

	Map<String, Ack> acks() {
		return this.acks;
	}

	long acknowledgedEvents() {
		return this.acks.size();
	}

	long pushes() {
		return this.pushes.get();
	}

	long retries() {
		return this.retries.get();
	}

	long unavailableAnswers() {
		return this.unavailable.get();
	}

	long unreachableTries() {
		return this.unreachable.get();
	}

	Map<String, AtomicLong> unexpectedAnswers() {
		return this.unexpected;
	}

}
