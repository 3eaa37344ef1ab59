package dev.a2.testkit;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;

/**
 * The tests' data source, which can refuse its next connections as an unreachable PostgreSQL would
 * (SQLState 08001): A2 then answers {@code STORE_UNAVAILABLE} and changes nothing.
 */
final class FaultyDataSource implements DataSource, AutoCloseable {

	private final HikariDataSource pool;

	private final AtomicInteger refusals = new AtomicInteger();

	FaultyDataSource(HikariDataSource pool) {
		this.pool = pool;
	}

	/** Refuses the next {@code connections} connections. */
	void refuseNext(int connections) {
		if (connections < 0) {
			throw new IllegalArgumentException("operations must be 0 or more, was " + connections);
		}
		this.refusals.set(connections);
	}

	int refusalsLeft() {
		return this.refusals.get();
	}

	@Override
	public Connection getConnection() throws SQLException {
		refuse();
		return this.pool.getConnection();
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		refuse();
		return this.pool.getConnection(username, password);
	}

	private void refuse() throws SQLException {
		if (this.refusals.getAndUpdate((left) -> Math.max(left - 1, 0)) > 0) {
			throw new SQLTransientConnectionException("the test kit made the store unavailable", "08001");
		}
	}

	String jdbcUrl() {
		return this.pool.getJdbcUrl();
	}

	@Override
	public void close() {
		this.pool.close();
	}

	@Override
	public PrintWriter getLogWriter() throws SQLException {
		return this.pool.getLogWriter();
	}

	@Override
	public void setLogWriter(PrintWriter out) throws SQLException {
		this.pool.setLogWriter(out);
	}

	@Override
	public void setLoginTimeout(int seconds) throws SQLException {
		this.pool.setLoginTimeout(seconds);
	}

	@Override
	public int getLoginTimeout() throws SQLException {
		return this.pool.getLoginTimeout();
	}

	@Override
	public Logger getParentLogger() throws SQLFeatureNotSupportedException {
		return this.pool.getParentLogger();
	}

	@Override
	public <T> T unwrap(Class<T> type) throws SQLException {
		return type.isInstance(this) ? type.cast(this) : this.pool.unwrap(type);
	}

	@Override
	public boolean isWrapperFor(Class<?> type) throws SQLException {
		return type.isInstance(this) || this.pool.isWrapperFor(type);
	}

}
