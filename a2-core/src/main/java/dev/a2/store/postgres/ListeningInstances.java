package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The other instances that listen for session changes, and the sessions they follow: an instance
 * tells another only what it follows, and one with nobody to tell sends nothing. At 4 pushes at once
 * the notices were a fifth of the CPU each push took, the database's and the JVM's.
 * <p>
 * Each listening connection holds an advisory lock of the schema's listeners, keyed by a random id,
 * for as long as it listens; PostgreSQL releases it when the connection ends, so {@code pg_locks}
 * shows who listens. An instance that starts listening reads who held such a lock before it and says
 * hello ({@code h/<space>/<id>}). Each of them answers with the sessions it follows
 * ({@code f/<space>/<id>/<contract>/<session>}) and then an answer ({@code a/<space>/<id>/<to>}),
 * after it has begun to tell the newcomer its changes; the newcomer counts as connected once all
 * have answered, and tells every change until then. Follows and their ends
 * ({@code u/<space>/<id>/<contract>/<session>}) travel in order with the follower's other notices; an
 * instance that learns of a follow tells the follower once that the session changed, for what it
 * changed before. An instance that dies without answering is waited for until its lock is gone
 * (meanwhile the newcomer's readers poll, as they do while the connection is down), and its follows
 * are dropped then.
 * <p>
 * Used by the listening thread, but for {@link #othersListen()} and {@link #followedElsewhere},
 * which the publishers read, and {@link #id()}, which the notifier reads.
 */
final class ListeningInstances {

	/** The first key of the listeners' locks: the schema's, apart from {@link PostgresInstanceLiveness}'s. */
	static final String SPACE = "(hashtext(current_schema() || ' listeners') & 2147483647)";

	private static final String LOCK = "SELECT pg_try_advisory_lock(?, ?)";

	private static final String OTHERS = """
			SELECT objid::bigint FROM pg_locks
			WHERE locktype = 'advisory' AND classid = ?::bigint::oid AND objsubid = 2 AND granted
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			  AND pid <> pg_backend_pid()""";

	private static final String SAY = "SELECT pg_notify('" + PostgresSessionChanges.CHANNEL + "', ?)";

	/** What the instance says to the others, in order with its notices of changes. */
	interface Outbox {

		/** Sends the sessions this instance follows, then the answer to the hello of {@code to}. */
		void answer(int to);

		/** Tells the others that the session changed: a follower that was not told before reads it. */
		void changed(String session);

		/** This instance has a new id: what it follows is to be said under it. */
		void joined();

	}

	private final Outbox outbox;

	/** Set back to {@code true} whenever this instance cannot hear a newcomer's hello. */
	private volatile boolean othersListen = true;

	/**
	 * Whether the follows of the others are known: every instance that listened before this one has
	 * answered its hello or gone. Set on the listening thread, read by the threads that publish.
	 */
	private volatile boolean informed;

	private volatile int space;

	/** This connection's id among the listeners; 0 while it has none. */
	private volatile int id;

	/** The instances that listened before this one and have not answered its hello yet. */
	private final Set<Integer> awaited = new HashSet<>();

	/** By {@code <contract>/<session>}, the ids of the other instances that follow it. */
	private final Map<String, Set<Integer>> followers = new ConcurrentHashMap<>();

	ListeningInstances(Outbox outbox) {
		this.outbox = outbox;
	}

	/** Whether another instance may listen: while it is not known, the answer is yes. */
	boolean othersListen() {
		return this.othersListen;
	}

	/** Whether another instance may follow the session ({@code <contract>/<session>}). */
	boolean followedElsewhere(String session) {
		return this.othersListen && (!this.informed || this.followers.containsKey(session));
	}

	/** Whether every instance that listened before this one has answered its hello. */
	boolean joined() {
		return this.informed;
	}

	int space() {
		return this.space;
	}

	int id() {
		return this.id;
	}

	/** On a connection that already listens: takes an id, reads who listens, and says hello to them. */
	void join(Connection listening) throws SQLException {
		this.othersListen = true;
		this.informed = false;
		this.followers.clear();
		try (Statement statement = listening.createStatement();
				ResultSet rs = statement.executeQuery("SELECT " + SPACE)) {
			rs.next();
			this.space = rs.getInt(1);
		}
		int id = lock(listening);
		this.awaited.clear();
		this.awaited.addAll(others(listening));
		// what this instance follows goes out under the new id from now on
		this.id = id;
		this.outbox.joined();
		if (this.awaited.isEmpty()) {
			// an instance that locks after this read finds this one, and says hello
			this.othersListen = false;
		}
		else {
			say(listening, "h/" + this.space + "/" + id);
		}
		this.informed = this.awaited.isEmpty();
	}

	/**
	 * Handles a notice if it is a hello, an answer, a follow or its end: {@code false} when it is
	 * none of them.
	 */
	boolean receive(Connection listening, String notice) throws SQLException {
		char kind = notice.isEmpty() ? ' ' : notice.charAt(0);
		if (notice.length() < 2 || notice.charAt(1) != '/' || "hafu".indexOf(kind) < 0) {
			return false;
		}
		// a follow's last part is <contract>/<session>
		String[] parts = notice.split("/", (kind == 'f' || kind == 'u') ? 4 : -1);
		if (parts.length != ((kind == 'h') ? 3 : 4) || !parts[1].equals(Integer.toString(this.space))) {
			// another schema's instances, or a version that says more: not ours
			return true;
		}
		int from;
		try {
			from = Integer.parseInt(parts[2]);
		}
		catch (NumberFormatException ex) {
			return true;
		}
		if (from == this.id) {
			return true;
		}
		switch (kind) {
			case 'h' -> {
				this.othersListen = true;
				this.outbox.answer(from);
			}
			case 'a' -> {
				if (parts[3].equals(Integer.toString(this.id)) && this.awaited.remove(from) && this.awaited.isEmpty()) {
					this.informed = true;
				}
			}
			case 'f' -> {
				this.followers.computeIfAbsent(parts[3], (k) -> ConcurrentHashMap.newKeySet()).add(from);
				// told after the follower is known here: a change before it is read on this notice
				this.outbox.changed(parts[3]);
			}
			default -> this.followers.computeIfPresent(parts[3], (k, ids) -> {
				ids.remove(from);
				return ids.isEmpty() ? null : ids;
			});
		}
		return true;
	}

	/**
	 * Reads who listens now: an instance that stopped listening is not waited for any more and its
	 * follows are dropped, and when nobody else listens this instance stops sending notices.
	 */
	void check(Connection listening) throws SQLException {
		Set<Integer> others = others(listening);
		if (this.awaited.retainAll(others) && this.awaited.isEmpty()) {
			this.informed = true;
		}
		this.followers.values().removeIf((ids) -> {
			ids.retainAll(others);
			return ids.isEmpty();
		});
		if (others.isEmpty()) {
			this.othersListen = false;
		}
	}

	/** Stops listening: the lock goes before the connection returns to the pool, where it would stay held. */
	void leave(Connection listening) {
		this.othersListen = true;
		this.informed = false;
		this.id = 0;
		try (Statement statement = listening.createStatement()) {
			statement.execute("UNLISTEN *; SELECT pg_advisory_unlock_all(); RESET application_name");
		}
		catch (SQLException ex) {
			// a broken connection: its backend, and the lock with it, is gone or going
			try {
				listening.abort(Runnable::run);
			}
			catch (SQLException ignored) {
				// ending anyway
			}
		}
	}

	private int lock(Connection listening) throws SQLException {
		try (PreparedStatement lock = listening.prepareStatement(LOCK)) {
			for (int tries = 0; tries < 10; tries++) {
				int candidate = ThreadLocalRandom.current().nextInt(1, Integer.MAX_VALUE);
				lock.setInt(1, this.space);
				lock.setInt(2, candidate);
				try (ResultSet rs = lock.executeQuery()) {
					rs.next();
					if (rs.getBoolean(1)) {
						return candidate;
					}
				}
			}
		}
		throw new SQLException("no free id among ten random ones for the listeners' lock");
	}

	private Set<Integer> others(Connection listening) throws SQLException {
		Set<Integer> others = new HashSet<>();
		try (PreparedStatement statement = listening.prepareStatement(OTHERS)) {
			statement.setInt(1, this.space);
			try (ResultSet rs = statement.executeQuery()) {
				while (rs.next()) {
					others.add((int) rs.getLong(1));
				}
			}
		}
		return others;
	}

	private static void say(Connection listening, String notice) throws SQLException {
		try (PreparedStatement statement = listening.prepareStatement(SAY)) {
			statement.setString(1, notice);
			statement.execute();
		}
	}

}
