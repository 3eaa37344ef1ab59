package dev.a2.store.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Work on one pooled connection in auto-commit mode, where a statement commits as it answers: one
 * round trip where a transaction takes three ({@code BEGIN} with the statement, the commit). A pool
 * that hands out connections without auto-commit gets an explicit commit instead.
 */
final class AutoCommitted {

	private AutoCommitted() {
	}

	/** Runs {@code work}, whose statements on {@code dataSource} all use the one connection bound here. */
	static <T> T run(DataSource dataSource, Supplier<T> work) {
		Connection connection = DataSourceUtils.getConnection(dataSource);
		// the stores' statements run on the connection bound here, as they would in a transaction
		TransactionSynchronizationManager.bindResource(dataSource, new ConnectionHolder(connection));
		try {
			boolean manual = !connection.getAutoCommit();
			try {
				T result = work.get();
				if (manual) {
					connection.commit();
				}
				return result;
			}
			catch (RuntimeException | Error ex) {
				if (manual) {
					rollback(connection, ex);
				}
				throw ex;
			}
		}
		catch (SQLException ex) {
			throw new DataAccessResourceFailureException("A connection failed: " + ex.getMessage(), ex);
		}
		finally {
			TransactionSynchronizationManager.unbindResource(dataSource);
			DataSourceUtils.releaseConnection(connection, dataSource);
		}
	}

	private static void rollback(Connection connection, Throwable failure) {
		try {
			connection.rollback();
		}
		catch (SQLException ex) {
			// the failure that made the rollback necessary is the one to report
			failure.addSuppressed(ex);
		}
	}

}
