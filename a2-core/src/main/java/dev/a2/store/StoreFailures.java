package dev.a2.store;

import java.sql.SQLException;
import java.util.function.Supplier;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessResourceException;
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
				throw new A2Exception(ErrorCode.STORE_UNAVAILABLE,
						"PostgreSQL cannot be reached (" + rootMessage(ex) + "); nothing was changed, try again later", ex);
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

	/** The message of the innermost cause: what the driver or the pool said. */
	public static String rootMessage(Throwable ex) {
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return String.valueOf(root.getMessage());
	}

}
