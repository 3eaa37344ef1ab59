package dev.a2.store;

import java.lang.reflect.UndeclaredThrowableException;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.CallbackPreferringPlatformTransactionManager;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A {@link TransactionTemplate} for A2's own transactions that does not log an ERROR, with two stack
 * traces, when a transaction whose connection PostgreSQL broke cannot be rolled back: a transaction
 * without its connection is over, nothing of it commits, and the outage is told once at WARN by the
 * task that met it ({@link OutageLog}) and to the caller as {@code STORE_UNAVAILABLE}. Spring's
 * template logged "Application exception overridden by rollback exception" at every such failure, and
 * threw the rollback's failure in place of the statement's. Any other failed rollback is logged and
 * thrown as Spring's template does.
 */
public final class StoreTransactionTemplate extends TransactionTemplate {

	public StoreTransactionTemplate(PlatformTransactionManager transactionManager) {
		super(transactionManager);
	}

	@Override
	public <T> @Nullable T execute(TransactionCallback<T> action) throws TransactionException {
		PlatformTransactionManager manager = Objects.requireNonNull(getTransactionManager(), "transactionManager");
		if (manager instanceof CallbackPreferringPlatformTransactionManager) {
			// such a manager runs the callback and its rollback itself
			return super.execute(action);
		}
		// the steps of Spring's execute, which cannot be reused: the rollback this class changes is private there
		TransactionStatus status = manager.getTransaction(this);
		T result;
		try {
			result = action.doInTransaction(status);
		}
		catch (RuntimeException | Error ex) {
			rollback(manager, status, ex);
			throw ex;
		}
		catch (Throwable ex) {
			rollback(manager, status, ex);
			throw new UndeclaredThrowableException(ex, "TransactionCallback threw undeclared checked exception");
		}
		manager.commit(status);
		return result;
	}

	private void rollback(PlatformTransactionManager manager, TransactionStatus status, Throwable failure) {
		try {
			manager.rollback(status);
		}
		catch (RuntimeException | Error rollbackFailure) {
			if (StoreFailures.isUnavailable(failure) && StoreFailures.isUnavailable(rollbackFailure)) {
				// the connection is gone, and its transaction with it: the statement's failure is the one to tell
				failure.addSuppressed(rollbackFailure);
				return;
			}
			this.logger.error("Application exception overridden by rollback exception", failure);
			throw rollbackFailure;
		}
	}

}
