package dev.a2.test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.awaitility.Awaitility.await;

/**
 * A transaction of the test's own that holds rows, so that the test can line A2's transactions up
 * behind it in the order it wants, then let them go: how a test makes two writers meet on the same
 * rows at the same time, without sleeping. On one PostgreSQL: on Citus the waits are on the workers,
 * where the coordinator does not see them.
 */
public final class HeldRows implements AutoCloseable {

	private final Connection connection;

	private final long backend;

	private final JdbcClient observer;

	private HeldRows(Connection connection, long backend, JdbcClient observer) {
		this.connection = connection;
		this.backend = backend;
		this.observer = observer;
	}

	/** Opens a transaction on a connection of {@code dataSource} and runs {@code statements} in it. */
	public static HeldRows hold(DataSource dataSource, String... statements) throws SQLException {
		Connection connection = dataSource.getConnection();
		try {
			connection.setAutoCommit(false);
			long backend;
			try (Statement statement = connection.createStatement();
					ResultSet pid = statement.executeQuery("SELECT pg_backend_pid()")) {
				pid.next();
				backend = pid.getLong(1);
			}
			HeldRows held = new HeldRows(connection, backend, JdbcClient.create(dataSource));
			held.also(statements);
			return held;
		}
		catch (SQLException | RuntimeException ex) {
			connection.close();
			throw ex;
		}
	}

	/** Runs more statements in the same transaction. */
	public void also(String... statements) throws SQLException {
		try (Statement statement = this.connection.createStatement()) {
			for (String sql : statements) {
				statement.execute(sql);
			}
		}
	}

	/**
	 * Waits until {@code count} backends wait for this transaction, directly or queued behind another
	 * that waits for it.
	 */
	public void awaitWaiting(int count) {
		await().atMost(Duration.ofSeconds(30)).until(() -> waiting() == count);
	}

	private int waiting() {
		return this.observer.sql("""
				WITH RECURSIVE behind(pid) AS (
				    SELECT :backend::int
				    UNION
				    SELECT a.pid FROM pg_stat_activity a JOIN behind b ON b.pid = ANY(pg_blocking_pids(a.pid))
				)
				SELECT count(*) - 1 FROM behind""").param("backend", this.backend).query(Integer.class).single();
	}

	/** Commits: what waited goes on. */
	public void release() throws SQLException {
		this.connection.commit();
	}

	@Override
	public void close() throws SQLException {
		this.connection.close();
	}

}
