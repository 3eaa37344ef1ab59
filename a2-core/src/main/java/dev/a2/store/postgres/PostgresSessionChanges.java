package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import dev.a2.live.SessionChange;
import dev.a2.live.SessionChangeListeners;
import dev.a2.live.SessionChanges;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * {@link SessionChanges} between instances through PostgreSQL {@code LISTEN/NOTIFY}.
 * <p>
 * One connection per instance listens, on a thread of its own, and comes back by itself when the
 * database goes away. Notifications are sent after the change committed, by a second thread that
 * coalesces what piled up meanwhile into one statement: a {@code NOTIFY} inside the append's own
 * transaction would serialize every commit on PostgreSQL's notify queue lock. Events and presence
 * are told only while another instance follows the session, work and clears while another instance
 * listens ({@link ListeningInstances}). A change whose notification is lost (the instance died right
 * after the commit) reaches the others by their poll. A notice reads
 * {@code <kind>/<origin>/<contract>/<session>}; a session id has no {@code /}.
 */
public final class PostgresSessionChanges extends SessionChangeListeners implements SessionChanges {

	private static final Log logger = LogFactory.getLog(PostgresSessionChanges.class);

	/** The channel every instance listens on. */
	public static final String CHANNEL = "a2_session";

	/** The {@code application_name} of the connection that listens, as {@code pg_stat_activity} shows it. */
	public static final String APPLICATION_NAME = "a2-listen";

	/**
	 * One round trip in auto-commit, as at a few appends at once there is one per append. A notice is a
	 * hint, so its commit need not wait for the disk: {@code set_config} is local to the statement's
	 * own transaction (PostgreSQL 13 and later do not flush a notify-only commit anyway).
	 */
	private static final String NOTIFY = "SELECT count(pg_notify('" + CHANNEL + "', n)) FROM "
			+ "set_config('synchronous_commit', 'off', true) AS quick, unnest(?::text[]) AS n";

	private static final int MAX_NOTICES = 1000;

	/**
	 * The least time between two statements of notices. A notice that finds the notifier idle for
	 * longer goes at once; under load the notices of this interval share one statement, whose cost
	 * (a round trip, a transaction, a wake-up of every listening instance) is nearly all fixed. At
	 * 3,200 pushes/s on one instance this cut PostgreSQL's CPU for the notices (the statements and
	 * the two listening connections) from 113 to 46 µs per push, for at most a millisecond more
	 * before another instance shows a change.
	 */
	static final long SPACING_NANOS = Duration.ofMillis(1).toNanos();

	private static final Duration WAIT = Duration.ofMillis(500);

	/** How long the notifier waits after a statement of notices failed. */
	private static final long RETRY_NANOS = Duration.ofMillis(250).toNanos();

	private static final Duration CHECK_EVERY = Duration.ofSeconds(10);

	/** How often an instance that waits for answers to its hello reads again who listens. */
	private static final Duration JOIN_CHECK_EVERY = Duration.ofSeconds(1);

	/**
	 * The longest wait between two attempts to listen again. An attempt while the database is down
	 * costs little (the pool's wait for a connection, then a failure), while every second of the wait
	 * after the database is back keeps this instance's streams polling and its notices unheard: with
	 * 5 s, instances listened again 8.4 s after a restart in the chaos harness.
	 */
	private static final Duration RECONNECT_MAX = Duration.ofSeconds(1);

	private final DataSource dataSource;

	private final JdbcTemplate jdbc;

	private final String origin = UUID.randomUUID().toString().substring(0, 12);

	/** A channel only this instance's listener hears: closing wakes it there, telling no other instance. */
	private final String wakeChannel = "a2_wake_" + UUID.randomUUID().toString().replace("-", "");

	/** The notices of changes to send; guards {@link #follows} too, which go out in order with them. */
	private final LinkedHashSet<String> pending = new LinkedHashSet<>();

	private final OwnFollows follows = new OwnFollows();

	private final ListeningInstances instances = new ListeningInstances(new ListeningInstances.Outbox() {

		@Override
		public void answer(int to) {
			synchronized (PostgresSessionChanges.this.pending) {
				PostgresSessionChanges.this.follows.answer(to);
				PostgresSessionChanges.this.pending.notifyAll();
			}
		}

		@Override
		public void joined() {
			synchronized (PostgresSessionChanges.this.pending) {
				// the follows go out under the new id
				PostgresSessionChanges.this.pending.notifyAll();
			}
		}

		@Override
		public void changed(String session) {
			// events and presence alike: the follower reads what it follows of the session
			pend(SessionChange.Kind.EVENTS, session);
			pend(SessionChange.Kind.PRESENCE, session);
		}

	});

	private final Duration checkEvery;

	private final Thread listener;

	private final Thread notifier;

	private volatile boolean connected;

	/** When the listening connection was lost (System.nanoTime), 0 while none was: for the line saying it is back. */
	private long lostAt;

	private volatile boolean closed;

	private volatile @Nullable Connection connection;

	public PostgresSessionChanges(DataSource dataSource) {
		this(dataSource, CHECK_EVERY);
	}

	/**
	 * @param checkEvery how often the listening connection is checked, and who else listens read
	 * again: an instance that is left alone stops sending notices after at most this long
	 */
	PostgresSessionChanges(DataSource dataSource, Duration checkEvery) {
		this.dataSource = dataSource;
		this.checkEvery = checkEvery;
		this.jdbc = new JdbcTemplate(dataSource);
		this.listener = new Thread(this::listenLoop, "a2-listen");
		this.listener.setDaemon(true);
		this.notifier = new Thread(this::notifyLoop, "a2-notify");
		this.notifier.setDaemon(true);
		this.listener.start();
		this.notifier.start();
	}

	@Override
	public void publish(SessionChange.Kind kind, String contract, String session) {
		tell(new SessionChange(kind, contract, session, true));
		String key = contract + "/" + session;
		boolean others = switch (kind) {
			case WORK, CLEARED -> this.instances.othersListen();
			case EVENTS, PRESENCE -> this.instances.followedElsewhere(key);
		};
		if (others) {
			pend(kind, key);
		}
		// else read after the change committed: an instance that says hello or follows later reads it then
	}

	/** A notice of a change of the session ({@code <contract>/<session>}) to send. */
	private void pend(SessionChange.Kind kind, String session) {
		synchronized (this.pending) {
			this.pending.add(kind.code() + "/" + this.origin + "/" + session);
			this.pending.notifyAll();
		}
	}

	@Override
	public AutoCloseable follow(String contract, String session) {
		String key = contract + "/" + session;
		synchronized (this.pending) {
			if (this.follows.add(key)) {
				this.pending.notifyAll();
			}
		}
		AtomicBoolean open = new AtomicBoolean(true);
		return () -> {
			if (open.getAndSet(false)) {
				synchronized (this.pending) {
					if (this.follows.remove(key)) {
						this.pending.notifyAll();
					}
				}
			}
		};
	}

	@Override
	public boolean connected() {
		return this.connected;
	}

	/** Whether this instance sends its notices: another instance may listen. */
	boolean othersListen() {
		return this.instances.othersListen();
	}

	/** Whether this instance tells the session's events: another instance may follow it. */
	boolean followedElsewhere(String contract, String session) {
		return this.instances.followedElsewhere(contract + "/" + session);
	}

	private void notifyLoop() {
		long sent = System.nanoTime() - SPACING_NANOS;
		while (!this.closed) {
			synchronized (this.pending) {
				while (!this.closed && this.pending.isEmpty() && !this.follows.toSay(this.instances.id())) {
					try {
						this.pending.wait(WAIT.toMillis());
					}
					catch (InterruptedException ex) {
						return;
					}
				}
			}
			long early = sent + SPACING_NANOS - System.nanoTime();
			if (early > 0) {
				// what is published meanwhile goes in the same statement
				LockSupport.parkNanos(early);
			}
			List<String> notices = new ArrayList<>();
			List<Integer> answered;
			synchronized (this.pending) {
				answered = this.follows.say(this.instances.space(), this.instances.id(), this.instances.othersListen(),
						notices);
				var iterator = this.pending.iterator();
				while (iterator.hasNext() && notices.size() < MAX_NOTICES) {
					notices.add(iterator.next());
					iterator.remove();
				}
			}
			if (notices.isEmpty()) {
				continue;
			}
			sent = System.nanoTime();
			try {
				send(notices);
			}
			catch (RuntimeException ex) {
				// the other instances find these changes by their poll; the follows and answers go again
				logger.debug("Could not notify other instances of " + notices.size() + " changed sessions", ex);
				synchronized (this.pending) {
					this.follows.failed(answered);
				}
				// the database is away: not a statement a millisecond until it is back
				LockSupport.parkNanos(RETRY_NANOS);
			}
		}
	}

	private void send(List<String> notices) {
		AutoCommitted.run(this.dataSource, () -> {
			this.jdbc.query(NOTIFY, (rs) -> {
			}, (Object) notices.toArray(String[]::new));
			return null;
		});
	}

	private void listenLoop() {
		long backoff = 250;
		while (!this.closed) {
			try (Connection listening = this.dataSource.getConnection()) {
				this.connection = listening;
				try {
					listen(listening);
				}
				finally {
					// the lock and the LISTEN go before the connection returns to the pool (on a connection
					// closing had to abort, the statement fails and its backend takes them with it)
					this.instances.leave(listening);
				}
			}
			catch (SQLException | RuntimeException ex) {
				if (this.closed) {
					return;
				}
				if (this.connected) {
					backoff = 250;
					this.lostAt = System.nanoTime();
					logger.warn("Lost the connection that listens for changes of other instances; reconnecting, and "
							+ "polling meanwhile: " + ex.getMessage());
				}
				else {
					logger.debug("Could not listen for changes of other instances", ex);
				}
			}
			finally {
				this.connection = null;
			}
			if (this.connected) {
				this.connected = false;
				tell(null);
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

	/** Listens until closed: connected once every instance that listened before has answered. */
	private void listen(Connection listening) throws SQLException {
		listening.setAutoCommit(true);
		listening.setClientInfo("ApplicationName", APPLICATION_NAME);
		try (Statement statement = listening.createStatement()) {
			statement.execute("LISTEN " + CHANNEL + "; LISTEN " + this.wakeChannel);
		}
		this.instances.join(listening);
		PGConnection pg = listening.unwrap(PGConnection.class);
		long checked = System.nanoTime();
		while (!this.closed) {
			if (!this.connected && this.instances.joined()) {
				if (this.lostAt != 0) {
					logger.info("Listening again for changes of other instances, "
							+ (System.nanoTime() - this.lostAt) / 1_000_000 + " ms after the connection was lost");
					this.lostAt = 0;
				}
				this.connected = true;
				tell(null);
			}
			PGNotification[] notifications = pg.getNotifications((int) WAIT.toMillis());
			if (notifications != null) {
				for (PGNotification notification : notifications) {
					if (notification.getName().equals(this.wakeChannel)) {
						continue;
					}
					if (!this.instances.receive(listening, notification.getParameter())) {
						receive(notification.getParameter());
					}
				}
			}
			// a connection cut without a word (a half-open socket) shows itself only when used
			if (System.nanoTime() - checked > (this.connected ? this.checkEvery : JOIN_CHECK_EVERY).toNanos()) {
				this.instances.check(listening);
				checked = System.nanoTime();
			}
		}
	}

	private void receive(String notice) {
		// kind / origin / contract / session
		int first = notice.indexOf('/');
		int second = notice.indexOf('/', first + 1);
		int third = notice.indexOf('/', second + 1);
		if (first != 1 || second < 0 || third < 0) {
			return;
		}
		SessionChange.Kind kind = SessionChange.Kind.of(notice.charAt(0));
		if (kind == null || notice.regionMatches(2, this.origin, 0, this.origin.length()) && second - 2 == this.origin.length()) {
			// our own changes were told when they were published
			return;
		}
		tell(new SessionChange(kind, notice.substring(second + 1, third), notice.substring(third + 1), false));
	}

	@Override
	public void close() {
		this.closed = true;
		synchronized (this.pending) {
			this.pending.notifyAll();
		}
		this.listener.interrupt();
		if (this.connection != null) {
			// the listener leaves by itself once its wait for notices ends, and hands its connection back to the
			// pool whole; aborted under it, the connection was logged by the pool as broken, with a stack trace,
			// at every shutdown. A notice on the listener's own channel ends the wait at once; it is sent from
			// another thread, as a pool that cannot reach the database would hold this one for its connection
			// timeout
			Thread wake = new Thread(() -> {
				try {
					this.jdbc.execute("NOTIFY " + this.wakeChannel);
				}
				catch (RuntimeException ex) {
					// the wait ends by itself
				}
			}, "a2-listen-wake");
			wake.setDaemon(true);
			wake.start();
			try {
				this.listener.join(WAIT.toMillis() + 250);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		Connection listening = this.connection;
		if (listening != null) {
			// a listener that did not come back in time (a database that does not answer)
			try {
				listening.abort(Runnable::run);
			}
			catch (SQLException ex) {
				// closing anyway
			}
		}
	}

}
