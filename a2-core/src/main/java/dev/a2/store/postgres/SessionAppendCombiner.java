package dev.a2.store.postgres;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;

/**
 * Group commit for one session. Appends to a session serialize on its row lock until they commit,
 * so writers of one busy session would each wait for the others' commits in turn. Instead, while
 * one append of a session runs, the appends that arrive for it queue here, and the next of them
 * stores them all in one transaction: each caller's events stay together and in order, with
 * contiguous indexes, and a commit (one disk flush) serves several callers.
 * <p>
 * A round that fails for a reason other than the store being unavailable is run again one caller at
 * a time, so that one caller's bad batch fails only that caller.
 */
final class SessionAppendCombiner {

	/** The most events one combined transaction takes (a caller's own batch may be as large). */
	static final int MAX_ROUND_EVENTS = 1000;

	private final Map<String, Line> lines = new ConcurrentHashMap<>();

	/**
	 * Appends {@code events} through {@code store}, which appends a list of events with distinct ids
	 * in one transaction and answers their stored forms in the list's order.
	 */
	List<StoredEvent> append(String contract, String session, List<EventToStore> events,
			Function<List<EventToStore>, List<StoredEvent>> store) {
		String key = contract + '\u0000' + session;
		Waiter mine = new Waiter(events);
		Line line = this.lines.computeIfAbsent(key, (k) -> new Line());
		boolean lead;
		synchronized (line) {
			lead = !line.busy;
			if (lead) {
				line.busy = true;
			}
			else {
				line.queue.add(mine);
			}
		}
		if (!lead) {
			Outcome outcome = mine.outcome.join();
			if (!outcome.lead()) {
				return outcome.result();
			}
			// out of the queue now: its own outcome is still to come
			mine.outcome = new CompletableFuture<>();
		}
		// leading: store what queued meanwhile with this caller's events, then hand the lead on
		List<Waiter> round = new ArrayList<>();
		round.add(mine);
		try {
			synchronized (line) {
				int size = events.size();
				while (!line.queue.isEmpty() && size + line.queue.peek().events.size() <= MAX_ROUND_EVENTS) {
					Waiter next = line.queue.poll();
					size += next.events.size();
					round.add(next);
				}
			}
			run(round, store);
		}
		finally {
			for (Waiter waiter : round) {
				// only when the round ended in an Error: no caller may wait for ever
				if (!waiter.outcome.isDone()) {
					waiter.outcome.complete(Outcome.failed(new A2Exception(ErrorCode.INTERNAL,
							"the append that was to store these events failed unexpectedly")));
				}
			}
			synchronized (line) {
				Waiter next = line.queue.poll();
				if (next != null) {
					next.outcome.complete(Outcome.LEAD);
				}
				else {
					line.busy = false;
					this.lines.remove(key, line);
				}
			}
		}
		return mine.outcome.join().result();
	}

	/** How many appends of the session wait behind the one that runs. */
	int waiting(String contract, String session) {
		Line line = this.lines.get(contract + '\u0000' + session);
		if (line == null) {
			return 0;
		}
		synchronized (line) {
			return line.queue.size();
		}
	}

	private static void run(List<Waiter> round, Function<List<EventToStore>, List<StoredEvent>> store) {
		if (round.size() == 1) {
			Waiter only = round.get(0);
			try {
				only.outcome.complete(Outcome.of(store.apply(only.events)));
			}
			catch (RuntimeException ex) {
				only.outcome.complete(Outcome.failed(ex));
			}
			return;
		}
		// two callers may send one id (a retry racing its original): it is stored once, both get it
		Map<String, EventToStore> distinct = new LinkedHashMap<>();
		for (Waiter waiter : round) {
			for (EventToStore event : waiter.events) {
				distinct.putIfAbsent(event.id(), event);
			}
		}
		List<StoredEvent> stored;
		try {
			stored = store.apply(List.copyOf(distinct.values()));
		}
		catch (RuntimeException ex) {
			if (ex instanceof A2Exception a2 && a2.code() == ErrorCode.STORE_UNAVAILABLE) {
				round.forEach((waiter) -> waiter.outcome.complete(Outcome.failed(ex)));
			}
			else {
				round.forEach((waiter) -> run(List.of(waiter), store));
			}
			return;
		}
		Map<String, StoredEvent> byId = new HashMap<>(stored.size() * 2);
		stored.forEach((event) -> byId.put(event.id(), event));
		for (Waiter waiter : round) {
			waiter.outcome.complete(Outcome.of(waiter.events.stream().map((event) -> byId.get(event.id())).toList()));
		}
	}

	/** The appends of one session waiting behind the one that runs. */
	private static final class Line {

		private boolean busy;

		private final ArrayDeque<Waiter> queue = new ArrayDeque<>();

	}

	private static final class Waiter {

		private final List<EventToStore> events;

		private volatile CompletableFuture<Outcome> outcome = new CompletableFuture<>();

		Waiter(List<EventToStore> events) {
			this.events = events;
		}

	}

	/** How a waiter's append ended, or that it is to lead the next round. */
	private record Outcome(boolean lead, List<StoredEvent> stored, RuntimeException failure) {

		static final Outcome LEAD = new Outcome(true, null, null);

		static Outcome of(List<StoredEvent> stored) {
			return new Outcome(false, stored, null);
		}

		static Outcome failed(RuntimeException failure) {
			return new Outcome(false, null, failure);
		}

		List<StoredEvent> result() {
			if (this.failure != null) {
				throw this.failure;
			}
			return this.stored;
		}

	}

}
