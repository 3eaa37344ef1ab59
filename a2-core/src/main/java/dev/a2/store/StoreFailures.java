package dev.a2.store;

import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionSystemException;

/**
 * Turns "the database cannot be reached" into {@code STORE_UNAVAILABLE}, whatever layer noticed it
 * (the pool, the driver, the transaction manager); every other failure passes through unchanged.
 * For store implementations, and for A2's own transactions that span stores.
 */
public final class StoreFailures {

	private StoreFailures() {
	}

	public static <T> T guard(Supplier<T> work) {
		try {
			return work.get();
		}
		catch (RuntimeException ex) {
			if (isUnavailable(ex)) {
				throw new A2Exception(ErrorCode.STORE_UNAVAILABLE, unavailable(ex), ex);
			}
			throw ex;
		}
	}

	public static boolean isUnavailable(Throwable ex) {
		for (Throwable t = ex; t != null; t = t.getCause()) {
			if (t instanceof DataAccessResourceFailureException || t instanceof TransientDataAccessResourceException
					|| t instanceof CannotCreateTransactionException || t instanceof TransactionSystemException) {
				return true;
			}
			// 08: connection exceptions; 57P: the server is shutting down or restarting
			if (t instanceof SQLException sql && sql.getSQLState() != null
					&& (sql.getSQLState().startsWith("08") || sql.getSQLState().startsWith("57P"))) {
				return true;
			}
		}
		return false;
	}

	/**
	 * What the caller is told. Only a request that never had a connection certainly changed nothing: one
	 * whose connection broke while its statement or its commit was under way may have been stored
	 * (the commit reached PostgreSQL, its answer did not), which a caller that appends again without ids
	 * would store twice.
	 */
	private static String unavailable(Throwable ex) {
		String said = "PostgreSQL cannot be reached (" + rootMessage(ex) + ")";
		return neverConnected(ex) ? said + "; nothing was changed, try again later"
				: said + ": the connection broke before PostgreSQL answered, so a write may or may not be stored; "
						+ "try again later with the same ids, which stores nothing twice";
	}

	/** Whether the request failed before it had a connection: the pool gave none, or PostgreSQL refused one. */
	private static boolean neverConnected(Throwable ex) {
		for (Throwable t = ex; t != null; t = t.getCause()) {
			if (t instanceof CannotGetJdbcConnectionException || t instanceof CannotCreateTransactionException
					|| t instanceof SQLTransientConnectionException || t instanceof ConnectException) {
				return true;
			}
			// 08001, 08004: no connection was made or it was refused; 57P03: PostgreSQL is starting or in recovery
			if (t instanceof SQLException sql && ("08001".equals(sql.getSQLState()) || "08004".equals(sql.getSQLState())
					|| "57P03".equals(sql.getSQLState()))) {
				return true;
			}
			if (t.getCause() == t) {
				break;
			}
		}
		return false;
	}

	/**
	 * What the driver or the pool said: the innermost cause's message, or the nearest one outside it that
	 * has one (a connection cut mid-read ends in an {@code EOFException} without a message, which read
	 * "(null)"), or the innermost cause's type.
	 */
	public static String rootMessage(Throwable ex) {
		List<Throwable> chain = new ArrayList<>();
		for (Throwable t = ex; t != null && !chain.contains(t); t = t.getCause()) {
			chain.add(t);
		}
		for (int i = chain.size() - 1; i >= 0; i--) {
			String message = chain.get(i).getMessage();
			if (message != null && !message.isBlank()) {
				return message;
			}
		}
		return chain.get(chain.size() - 1).getClass().getSimpleName();
	}

}
