package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Which other instances listen for session changes, so that an instance with none to tell sends no
 * notices: a single instance then pays nothing for them (at 4 pushes at once they were a fifth of
 * the CPU each push took, the database's and the JVM's).
 * <p>
 * Each listening connection holds an advisory lock of the schema's listeners, keyed by a random id,
 * for as long as it listens; PostgreSQL releases it when the connection ends, so {@code pg_locks}
 * shows who listens. An instance that starts listening reads who held such a lock before it, says
 * hello ({@code h/<space>/<id>}), and counts as connected only once each of them answered
 * ({@code a/<space>/<id>/<to>}): an instance answers after it has begun to send its notices, so no
 * change made after the newcomer's first reads goes untold. An instance that found nobody, or finds
 * nobody at a later check, stops sending until the next hello. One that dies without answering is
 * waited for until its lock is gone; meanwhile the newcomer's readers poll, as they do while the
 * connection is down.
 * <p>
 * Used by the listening thread alone, but for {@link #othersListen()}, which the publishers read.
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

	/** Set back to {@code true} whenever this instance cannot hear a newcomer's hello. */
	private volatile boolean othersListen = true;

	private int space;

	private int id;

	/** The instances that listened before this one and have not answered its hello yet. */
	private final Set<Integer> awaited = new HashSet<>();

	/** Whether another instance may listen: while it is not known, the answer is yes. */
	boolean othersListen() {
		return this.othersListen;
	}

	/** Whether every instance that listened before this one has answered its hello. */
	boolean joined() {
		return this.awaited.isEmpty();
	}

	/** On a connection that already listens: takes an id, reads who listens, and says hello to them. */
	void join(Connection listening) throws SQLException {
		this.othersListen = true;
		try (Statement statement = listening.createStatement();
				ResultSet rs = statement.executeQuery("SELECT " + SPACE)) {
			rs.next();
			this.space = rs.getInt(1);
		}
		this.id = lock(listening);
		this.awaited.clear();
		this.awaited.addAll(others(listening));
		if (this.awaited.isEmpty()) {
			// an instance that locks after this read finds this one, and says hello
			this.othersListen = false;
		}
		else {
			say(listening, "h/" + this.space + "/" + this.id);
		}
	}

	/**
	 * Handles a notice if it is a hello or an answer: {@code false} when it is neither. A hello is
	 * answered only after this instance has begun to send its notices.
	 */
	boolean receive(Connection listening, String notice) throws SQLException {
		boolean hello = notice.startsWith("h/");
		if (!hello && !notice.startsWith("a/")) {
			return false;
		}
		String[] parts = notice.split("/");
		if (parts.length != (hello ? 3 : 4) || !parts[1].equals(Integer.toString(this.space))) {
			// another schema's instances, or a version that says more: not ours to answer
			return true;
		}
		try {
			int from = Integer.parseInt(parts[2]);
			if (hello && from != this.id) {
				this.othersListen = true;
				say(listening, "a/" + this.space + "/" + this.id + "/" + from);
			}
			else if (!hello && Integer.parseInt(parts[3]) == this.id) {
				this.awaited.remove(from);
			}
		}
		catch (NumberFormatException ex) {
			// not an instance of ours
		}
		return true;
	}

	/**
	 * Reads who listens now: an awaited instance that stopped listening is not waited for any more,
	 * and when nobody else listens this instance stops sending notices.
	 */
	void check(Connection listening) throws SQLException {
		Set<Integer> others = others(listening);
		this.awaited.retainAll(others);
		if (others.isEmpty()) {
			this.othersListen = false;
		}
	}

	/** Stops listening: the lock goes before the connection returns to the pool, where it would stay held. */
	void leave(Connection listening) {
		this.othersListen = true;
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
