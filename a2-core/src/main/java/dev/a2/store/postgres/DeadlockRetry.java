package dev.a2.store.postgres;

import java.util.function.Supplier;

import org.springframework.dao.PessimisticLockingFailureException;

/**
 * Runs a transaction of A2's own again when PostgreSQL breaks a deadlock by failing it. The failed
 * transaction changed nothing and the other one went on, so the next try can take its locks. A2's
 * writers take the rows they share in one order ({@link PostgresWorkStore}); this is for what that
 * cannot rule out (a finish appending into a session another cursor reads, a statement of the
 * application's taking A2's rows in another order). Never for a transaction of the application's:
 * that one is the caller's to run again.
 */
final class DeadlockRetry {

	private static final int ATTEMPTS = 3;

	private DeadlockRetry() {
	}

	static <T> T run(Supplier<T> transaction) {
		for (int attempt = 1;; attempt++) {
			try {
				return transaction.get();
			}
			catch (PessimisticLockingFailureException ex) {
				if (attempt == ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

}
