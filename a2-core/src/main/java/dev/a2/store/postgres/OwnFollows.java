package dev.a2.store.postgres;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The sessions this instance follows ({@code <contract>/<session>}, follows counted), and what the
 * other instances were told of them: the follows and ends to tell, and the hellos to answer with all
 * of them. Not thread-safe: {@link PostgresSessionChanges} guards it with the lock of its notices,
 * so that what is said goes out in order with them.
 */
final class OwnFollows {

	private final Map<String, Integer> counts = new HashMap<>();

	/** The sessions whose follow began or ended since the others were last told. */
	private final Set<String> changed = new LinkedHashSet<>();

	/** The sessions the others were told this instance follows, under {@link #announcedAs}. */
	private final Set<String> announced = new HashSet<>();

	/** The listeners whose hello is to be answered. */
	private final List<Integer> answers = new ArrayList<>();

	/** The listener id the follows were told under (0: none). */
	private int announcedAs;

	/** One more follow of the session; answers whether the others are now to be told. */
	boolean add(String session) {
		if (this.counts.merge(session, 1, Integer::sum) > 1) {
			return false;
		}
		this.changed.add(session);
		return true;
	}

	/** One follow less; answers whether the others are now to be told. */
	boolean remove(String session) {
		if (this.counts.merge(session, -1, Integer::sum) > 0) {
			return false;
		}
		this.counts.remove(session);
		this.changed.add(session);
		return true;
	}

	void answer(int to) {
		this.answers.add(to);
	}

	/** Whether there is something to say under the listener id {@code id} (0: none yet). */
	boolean toSay(int id) {
		return id != 0 && (!this.changed.isEmpty() || !this.answers.isEmpty()
				|| id != this.announcedAs && !this.counts.isEmpty());
	}

	/**
	 * Adds to {@code notices} the follows begun and ended since the last time (when another instance
	 * listens: a newcomer hears them in the answer to its hello), then the answers to the hellos, each
	 * after every session followed; answers the hellos answered.
	 */
	List<Integer> say(int space, int id, boolean othersListen, List<String> notices) {
		if (id == 0) {
			// no id to say them under: they go when the listener has one
			return List.of();
		}
		String from = space + "/" + id + "/";
		if (id != this.announcedAs) {
			// a new id (the listener reconnected, or a send failed): the others know nothing under it
			this.announced.clear();
			this.changed.addAll(this.counts.keySet());
			this.announcedAs = id;
		}
		for (String session : this.changed) {
			boolean following = this.counts.containsKey(session);
			if ((following ? this.announced.add(session) : this.announced.remove(session)) && othersListen) {
				notices.add((following ? "f/" : "u/") + from + session);
			}
		}
		this.changed.clear();
		List<Integer> answered = List.copyOf(this.answers);
		for (Integer to : answered) {
			for (String session : this.announced) {
				notices.add("f/" + from + session);
			}
			notices.add("a/" + from + to);
		}
		this.answers.clear();
		return answered;
	}

	/** The statement that said it failed: everything is said again, under the same id. */
	void failed(List<Integer> answered) {
		this.announcedAs = 0;
		this.answers.addAll(0, answered);
	}

}
