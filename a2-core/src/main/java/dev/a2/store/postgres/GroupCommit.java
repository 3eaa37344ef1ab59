package dev.a2.store.postgres;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;
import org.jspecify.annotations.Nullable;

/**
 * Group commit: appends that arrive while earlier ones are being stored are stored together in the
 * next statement, one durable commit for many callers, of one session or of many.
 * <p>
 * Appends of one {@code line} (on plain PostgreSQL one line that all sessions share, on Citus a
 * line per session) run as rounds, at most {@code leaders} at a time. A caller that finds no round
 * running runs one at once with its own events: a lone append waits for nothing. A caller whose
 * session is in a running round queues. So does one that finds every round taken, or a round free
 * while others run but too few queued to make a round's share of the callers: those queued, and
 * those in the running rounds, split over {@code leaders} rounds. When a round ends with the queue
 * a share, or a caller makes it one, the first caller queued whose session is free leads the next
 * round, taking with it whatever queued (up to {@link #MAX_ROUND_EVENTS}) but the callers of
 * sessions in other running rounds; the last round to end always hands on, so no caller is left
 * queued.
 * <p>
 * The share is what keeps rounds large under load. Callers answered by one round come back one by
 * one; without it the first back would take a free round alone, and the rounds would splinter into
 * many small statements, each with its own commit. So the rounds grow with the load, and no timer
 * ever holds an append back: a caller queued waits at most until the rounds running then have ended,
 * unless more than a round's events queued before it. A round groups its callers' events by
 * session, each caller's events together and in order, callers in the order they queued, and stores
 * them in one transaction (the store locks the sessions in one order). Each caller is answered only
 * after that commit.
 * <p>
 * A round that fails because the store is unavailable fails every caller in it. A round that fails
 * for any other reason (an id a session has already, a batch the database refuses) changed nothing,
 * and each of its callers stores its own events again, alone and at once on its own thread: one
 * caller's batch fails only that caller, and delays the others by one statement. A session whose
 * clear index is no longer the one a caller's run expects is left out of the round's statement, and
 * its callers store their events alone in the same way (a push among them is stored; the run's
 * append fails).
 */
final class GroupCommit {

	/** The most events one round takes (a caller's own batch may be as large). */
	static final int MAX_ROUND_EVENTS = 1000;

	/** Where a round's events go. */
	interface Store {

		/**
		 * Appends one session's events (distinct ids) in one transaction, events the session has
		 * already answering as stored; answers them in the list's order. With a {@code clearIndex} it
		 * appends only while the session's clear index is that one, else fails with {@code ABORTED}.
		 */
		List<StoredEvent> appendOne(String contract, String session, List<EventToStore> events, @Nullable Integer clearIndex);

		/**
		 * Appends several sessions' events (distinct ids within each session) in one transaction, or
		 * nothing if one fails; answers each session's events in the lists' order. A session whose
		 * clear index is not the one it expects is left out, and answers {@code null}.
		 */
		List<@Nullable List<StoredEvent>> appendAll(List<SessionEvents> sessions);

	}

	/**
	 * The events a round stores in one session, and the least clear index its callers expect the
	 * session to have ({@code null} when none expects one).
	 */
	record SessionEvents(String contract, String session, List<EventToStore> events, @Nullable Integer clearIndex) {
	}

	private final Store store;

	private final Map<String, Line> lines = new ConcurrentHashMap<>();

	private final AtomicLong rounds = new AtomicLong();

	GroupCommit(Store store) {
		this.store = store;
	}

	/**
	 * Appends {@code events} to a session in a round of {@code line}, of which at most
	 * {@code leaders} run at a time; answers the stored events in the list's order.
	 */
	List<StoredEvent> append(String line, int leaders, String contract, String session, List<EventToStore> events,
			@Nullable Integer clearIndex) {
		Waiter mine = new Waiter(contract, session, events, clearIndex);
		Line joined = join(line, leaders, mine);
		if (joined == null) {
			Outcome outcome = mine.outcome.join();
			if (!outcome.lead()) {
				return answer(mine, outcome);
			}
			// out of the queue now, leading: its own outcome is still to come
			mine.outcome = new CompletableFuture<>();
			joined = mine.line;
		}
		List<Waiter> round = new ArrayList<>();
		round.add(mine);
		List<Outcome> outcomes = null;
		try {
			synchronized (joined) {
				take(joined, round);
			}
			outcomes = run(round);
		}
		finally {
			// the next round first: its leader is to be woken, while this round's callers can wait a moment
			leave(line, joined, leaders, round);
			for (int i = 0; i < round.size(); i++) {
				// no outcome only when the round ended in an Error: no caller may wait for ever
				round.get(i).outcome.complete((outcomes != null) ? outcomes.get(i) : Outcome.failed(new A2Exception(
						ErrorCode.INTERNAL, "the append that was to store these events failed unexpectedly")));
			}
		}
		return answer(mine, mine.outcome.join());
	}

	/**
	 * Takes a round of the line if one is free (answers the line), else queues {@code waiter} (answers
	 * {@code null}; the waiter learns its line when it is told to lead).
	 */
	private @Nullable Line join(String key, int leaders, Waiter waiter) {
		while (true) {
			Line line = this.lines.computeIfAbsent(key, (k) -> new Line());
			synchronized (line) {
				if (line.retired) {
					// emptied and removed since it was looked up: look it up again
					continue;
				}
				waiter.line = line;
				// a session already in a running round waits for it: its appends meet on the session's
				// row lock anyway, and stored together in the next round they cost one commit
				boolean free = line.running < leaders && !line.sessions.containsKey(waiter.sessionKey());
				if (free && (line.running == 0 || (line.queue.isEmpty() && line.aShare(leaders, 1)))) {
					line.running++;
					line.sessions.merge(waiter.sessionKey(), 1, Integer::sum);
					return line;
				}
				line.queue.add(waiter);
				if (free && line.aShare(leaders, 0) && handOn(line)) {
					// the first queued leads, so that the queue's order is the round's
					line.running++;
				}
				return null;
			}
		}
	}

	/**
	 * Takes into the round what queued, in order, up to {@link #MAX_ROUND_EVENTS}: each caller whose
	 * session is in no other running round (those wait for that round to end).
	 */
	private static void take(Line line, List<Waiter> round) {
		Set<List<String>> ours = new HashSet<>();
		ours.add(round.get(0).sessionKey());
		int size = round.get(0).events.size();
		for (Iterator<Waiter> queued = line.queue.iterator(); queued.hasNext();) {
			Waiter next = queued.next();
			if (size + next.events.size() > MAX_ROUND_EVENTS) {
				break;
			}
			List<String> session = next.sessionKey();
			if (!ours.contains(session) && line.sessions.containsKey(session)) {
				continue;
			}
			queued.remove();
			size += next.events.size();
			round.add(next);
			if (ours.add(session)) {
				line.sessions.merge(session, 1, Integer::sum);
			}
		}
		line.inRounds += round.size();
	}

	/**
	 * Hands the round on to the first caller queued whose session is free, or frees it. While other
	 * rounds run, it is handed on only when the queued callers are a round's share of the line's
	 * callers: the rest of those still on their way back join them.
	 */
	private void leave(String key, Line line, int leaders, List<Waiter> round) {
		synchronized (line) {
			line.inRounds -= round.size();
			round.stream()
				.map(Waiter::sessionKey)
				.distinct()
				.forEach((session) -> line.sessions.computeIfPresent(session, (k, n) -> (n > 1) ? n - 1 : null));
			// the last round running always hands on: no caller may be left queued with no round to end
			if ((line.running == 1 || line.aShare(leaders, 0)) && handOn(line)) {
				return;
			}
			line.running--;
			if (line.running == 0) {
				line.retired = true;
				this.lines.remove(key, line);
			}
		}
	}

	/** Tells the first caller queued whose session is free to lead the next round; answers whether one was. */
	private static boolean handOn(Line line) {
		for (Iterator<Waiter> queued = line.queue.iterator(); queued.hasNext();) {
			Waiter next = queued.next();
			if (!line.sessions.containsKey(next.sessionKey())) {
				queued.remove();
				line.sessions.merge(next.sessionKey(), 1, Integer::sum);
				next.outcome.complete(Outcome.LEAD);
				return true;
			}
		}
		return false;
	}

	private List<StoredEvent> answer(Waiter waiter, Outcome outcome) {
		if (outcome.alone()) {
			return this.store.appendOne(waiter.contract, waiter.session, waiter.events, waiter.clearIndex);
		}
		return outcome.result();
	}

	/** Stores a round; answers how it ended for each of its callers, in the round's order. */
	private List<Outcome> run(List<Waiter> round) {
		this.rounds.incrementAndGet();
		if (round.size() == 1) {
			Waiter only = round.get(0);
			try {
				return List.of(Outcome.of(this.store.appendOne(only.contract, only.session, only.events, only.clearIndex)));
			}
			catch (RuntimeException ex) {
				return List.of(Outcome.failed(ex));
			}
		}
		// by session in the order the sessions come; two callers may send one id (a retry racing its
		// original): it is stored once, and both get it
		Map<List<String>, Map<String, EventToStore>> bySession = new LinkedHashMap<>();
		// a session's check is the least clear index its callers expect: clear indexes only grow, so it
		// passes only when every caller's expectation holds; when it leaves the session out, each of its
		// callers is stored again alone, with its own
		Map<List<String>, Integer> checks = new HashMap<>();
		for (Waiter waiter : round) {
			Map<String, EventToStore> distinct = bySession.computeIfAbsent(waiter.sessionKey(), (k) -> new LinkedHashMap<>());
			for (EventToStore event : waiter.events) {
				distinct.putIfAbsent(event.id(), event);
			}
			if (waiter.clearIndex != null) {
				checks.merge(waiter.sessionKey(), waiter.clearIndex, Math::min);
			}
		}
		List<SessionEvents> sessions = new ArrayList<>(bySession.size());
		bySession.forEach((key, events) -> sessions
			.add(new SessionEvents(key.get(0), key.get(1), List.copyOf(events.values()), checks.get(key))));
		List<@Nullable List<StoredEvent>> stored;
		try {
			if (sessions.size() == 1) {
				SessionEvents only = sessions.get(0);
				stored = List.of(this.store.appendOne(only.contract(), only.session(), only.events(), only.clearIndex()));
			}
			else {
				stored = this.store.appendAll(sessions);
			}
		}
		catch (RuntimeException ex) {
			boolean unavailable = ex instanceof A2Exception a2 && a2.code() == ErrorCode.STORE_UNAVAILABLE;
			Outcome outcome = unavailable ? Outcome.failed(ex) : Outcome.ALONE;
			return round.stream().map((waiter) -> outcome).toList();
		}
		Map<List<String>, Map<String, StoredEvent>> byId = new HashMap<>(sessions.size() * 2);
		for (int i = 0; i < sessions.size(); i++) {
			SessionEvents session = sessions.get(i);
			List<StoredEvent> answered = stored.get(i);
			if (answered != null) {
				Map<String, StoredEvent> events = new HashMap<>(session.events().size() * 2);
				answered.forEach((event) -> events.put(event.id(), event));
				byId.put(List.of(session.contract(), session.session()), events);
			}
		}
		List<Outcome> outcomes = new ArrayList<>(round.size());
		for (Waiter waiter : round) {
			Map<String, StoredEvent> events = byId.get(waiter.sessionKey());
			// a session the round left out (cleared since a run began): nothing of it was stored
			outcomes.add((events != null) ? Outcome.of(waiter.events.stream().map((event) -> events.get(event.id())).toList())
					: Outcome.ALONE);
		}
		return outcomes;
	}

	/** How many appends wait for a round, over every line. */
	int waiting() {
		int waiting = 0;
		for (Line line : this.lines.values()) {
			synchronized (line) {
				waiting += line.queue.size();
			}
		}
		return waiting;
	}

	/** How many rounds run now, over every line. */
	int running() {
		int running = 0;
		for (Line line : this.lines.values()) {
			synchronized (line) {
				running += line.running;
			}
		}
		return running;
	}

	/** How many rounds have run: each is one statement (a transaction) for all of its callers. */
	long rounds() {
		return this.rounds.get();
	}

	/** The appends of a line: how many rounds run, and who waits for the next. */
	private static final class Line {

		private int running;

		private boolean retired;

		/** How many callers the running rounds hold. */
		private int inRounds;

		private final ArrayDeque<Waiter> queue = new ArrayDeque<>();

		/** The sessions of the running rounds: in how many rounds each is. */
		private final Map<List<String>, Integer> sessions = new HashMap<>();

		/**
		 * Whether the callers queued, and {@code more} about to queue, are a round's share of the line's
		 * callers: of those queued and those in the running rounds, split over {@code leaders} rounds.
		 */
		boolean aShare(int leaders, int more) {
			int waiting = this.queue.size() + more;
			return (long) waiting * leaders >= this.inRounds + waiting;
		}

	}

	private static final class Waiter {

		private final String contract;

		private final String session;

		private final List<EventToStore> events;

		private final @Nullable Integer clearIndex;

		private @Nullable Line line;

		private volatile CompletableFuture<Outcome> outcome = new CompletableFuture<>();

		Waiter(String contract, String session, List<EventToStore> events, @Nullable Integer clearIndex) {
			this.contract = contract;
			this.session = session;
			this.events = events;
			this.clearIndex = clearIndex;
		}

		List<String> sessionKey() {
			return List.of(this.contract, this.session);
		}

	}

	/** How a waiter's append ended, that it is to lead the next round, or to store its events alone. */
	private record Outcome(boolean lead, boolean alone, @Nullable List<StoredEvent> stored, @Nullable RuntimeException failure) {

		static final Outcome LEAD = new Outcome(true, false, null, null);

		static final Outcome ALONE = new Outcome(false, true, null, null);

		static Outcome of(List<StoredEvent> stored) {
			return new Outcome(false, false, stored, null);
		}

		static Outcome failed(RuntimeException failure) {
			return new Outcome(false, false, null, failure);
		}

		List<StoredEvent> result() {
			if (this.failure != null) {
				throw this.failure;
			}
			return this.stored;
		}

	}

}
