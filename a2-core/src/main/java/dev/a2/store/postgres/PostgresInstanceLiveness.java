package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

import javax.sql.DataSource;

import dev.a2.store.InstanceLiveness;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * An instance's liveness on PostgreSQL: a session-level advisory lock, keyed by an id from the
 * sequence {@code a2_instance}, held on a connection of its own for as long as the instance runs.
 * PostgreSQL releases it when that connection's backend ends — the process was killed, the machine
 * lost its connection, the database restarted — so the others' sweep ({@link PostgresWorkStore})
 * sees within a second that the claims recorded under the id have no live owner.
 * <p>
 * The connection is checked every {@link #CHECK_EVERY}; when it fails, the id is given up for good
 * ({@code lost} is told it: the claims made under it are being taken over, so their attempts must
 * stop) and a new id is taken on a new connection. The lock's key space is the schema's, so that
 * applications in other schemas of the same database never take each other's ids for alive.
 */
final class PostgresInstanceLiveness implements InstanceLiveness {

	private static final Log logger = LogFactory.getLog(PostgresInstanceLiveness.class);

	static final Duration CHECK_EVERY = Duration.ofSeconds(1);

	private static final Duration RECONNECT_MAX = Duration.ofSeconds(5);

	/** How long the start waits for the first identity: claims made before it hold by their leases alone. */
	private static final Duration FIRST_WAIT = Duration.ofSeconds(5);

	/** The advisory lock's first key: the schema's, so that ids of other schemas are not taken for ours. */
	static final String KEY_SPACE = "(hashtext(current_schema()) & 2147483647)";

	private static final String NEXT_ID = "SELECT nextval('a2_instance')::integer";

	private static final String LOCK = "SELECT pg_try_advisory_lock(" + KEY_SPACE + ", ?)";

	private static final String UNLOCK = "SELECT pg_advisory_unlock(" + KEY_SPACE + ", ?)";

	private final DataSource dataSource;

	private final IntConsumer lost;

	private final Thread thread;

	private final Object wake = new Object();

	private final CountDownLatch firstTry = new CountDownLatch(1);

	private volatile @Nullable Integer owner;

	private volatile boolean closed;

	private volatile @Nullable Connection connection;

	PostgresInstanceLiveness(DataSource dataSource, IntConsumer lost) {
		this.dataSource = dataSource;
		this.lost = lost;
		this.thread = new Thread(this::hold, "a2-liveness");
		this.thread.setDaemon(true);
		this.thread.start();
		try {
			// the instance's first claims should record its identity too: it starts claiming after this
			this.firstTry.await(FIRST_WAIT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public @Nullable Integer owner() {
		return this.owner;
	}

	private void hold() {
		long backoff = 250;
		while (!this.closed) {
			Integer held = null;
			try (Connection holding = this.dataSource.getConnection()) {
				this.connection = holding;
				// no transaction left open for the life of the instance
				holding.setAutoCommit(true);
				held = take(holding);
				if (held == null) {
					continue;
				}
				this.owner = held;
				this.firstTry.countDown();
				backoff = 250;
				logger.info("This A2 instance is instance " + held + " of its database: a crash of it is seen at once, "
						+ "and its consumer runs are taken over at the next sweep");
				while (!this.closed) {
					synchronized (this.wake) {
						this.wake.wait(CHECK_EVERY.toMillis());
					}
					if (this.closed) {
						release(holding, held);
						return;
					}
					// a dropped connection shows itself only when used
					try (Statement statement = holding.createStatement()) {
						statement.execute("SELECT 1");
					}
				}
			}
			catch (InterruptedException ex) {
				return;
			}
			catch (SQLException | RuntimeException ex) {
				if (this.closed) {
					return;
				}
				if (held != null) {
					logger.warn("Lost the connection that shows this A2 instance alive (instance " + held + "): its consumer "
							+ "runs are stopped, as other instances take them over; taking a new identity: " + ex.getMessage());
				}
				else {
					logger.debug("Could not take an A2 instance identity; claims hold by their leases meanwhile", ex);
				}
			}
			finally {
				this.firstTry.countDown();
				this.connection = null;
				this.owner = null;
				if (held != null && !this.closed) {
					this.lost.accept(held);
				}
			}
			try {
				Thread.sleep(backoff);
			}
			catch (InterruptedException ex) {
				return;
			}
			backoff = Math.min(backoff * 2, RECONNECT_MAX.toMillis());
		}
	}

	/** A fresh id whose lock this connection now holds, or {@code null} when another holds it (a cycled id). */
	private static @Nullable Integer take(Connection holding) throws SQLException {
		int id;
		try (Statement statement = holding.createStatement(); ResultSet rs = statement.executeQuery(NEXT_ID)) {
			rs.next();
			id = rs.getInt(1);
		}
		try (PreparedStatement lock = holding.prepareStatement(LOCK)) {
			lock.setInt(1, id);
			try (ResultSet rs = lock.executeQuery()) {
				rs.next();
				return rs.getBoolean(1) ? id : null;
			}
		}
	}

	/** Gives the lock up before the connection goes back to the pool, where it would stay held. */
	private static void release(Connection holding, int id) {
		try (PreparedStatement unlock = holding.prepareStatement(UNLOCK)) {
			unlock.setInt(1, id);
			unlock.execute();
		}
		catch (SQLException ex) {
			abort(holding);
		}
	}

	/**
	 * Gives the identity up: the lock is released, so claims still recorded under it are taken over
	 * at the next sweep (a graceful stop released them already).
	 */
	@Override
	public void close() {
		this.closed = true;
		synchronized (this.wake) {
			this.wake.notifyAll();
		}
		try {
			this.thread.join(Duration.ofSeconds(5).toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		Connection holding = this.connection;
		if (holding != null) {
			// still busy after the wait (a statement hanging): end the connection, and the lock with it
			abort(holding);
		}
	}

	private static void abort(Connection connection) {
		try {
			connection.abort(Runnable::run);
		}
		catch (SQLException ex) {
			// ending anyway
		}
	}

}
