package dev.a2;

import java.util.HashSet;
import java.util.Set;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The sessions the current thread's transaction appended to or cleared and has not committed yet.
 * {@code consume} refuses to wait for them (§5.2: a wait that cannot end fails at once): a consumer
 * runs in transactions of its own, which see neither those events nor the session's row until the
 * commit. Once the transaction starts to complete they are forgotten, so code running after the
 * commit (an {@code afterCommit} callback, an after-commit event listener) may consume them.
 */
final class UncommittedWrites {

	/** The key of the current transaction's sessions among the thread's transaction resources. */
	private static final Object KEY = new Object();

	private UncommittedWrites() {
	}

	/** Notes that the current transaction, if there is one, wrote to the session. */
	static void record(String contract, String session) {
		if (!TransactionSynchronizationManager.isActualTransactionActive()
				|| !TransactionSynchronizationManager.isSynchronizationActive()) {
			// each write commits on its own
			return;
		}
		@SuppressWarnings("unchecked")
		Set<String> sessions = (Set<String>) TransactionSynchronizationManager.getResource(KEY);
		if (sessions == null) {
			Set<String> bound = new HashSet<>();
			TransactionSynchronizationManager.bindResource(KEY, bound);
			TransactionSynchronizationManager.registerSynchronization(new Forget(bound));
			sessions = bound;
		}
		sessions.add(key(contract, session));
	}

	/** Whether the current transaction wrote to the session and has not begun to commit or roll back. */
	static boolean contains(String contract, String session) {
		Object sessions = TransactionSynchronizationManager.getResource(KEY);
		return sessions instanceof Set<?> set && set.contains(key(contract, session));
	}

	private static String key(String contract, String session) {
		return contract + '\u0000' + session;
	}

	/** Keeps the sessions with their transaction: away while an inner one runs, gone once it completes. */
	private static final class Forget implements TransactionSynchronization {

		private final Set<String> sessions;

		private boolean completing;

		Forget(Set<String> sessions) {
			this.sessions = sessions;
		}

		@Override
		public void suspend() {
			TransactionSynchronizationManager.unbindResourceIfPossible(KEY);
		}

		@Override
		public void resume() {
			// a transaction of an afterCommit callback resumes this one when it has committed already
			if (!this.completing) {
				TransactionSynchronizationManager.bindResource(KEY, this.sessions);
			}
		}

		@Override
		public void beforeCompletion() {
			this.completing = true;
			TransactionSynchronizationManager.unbindResourceIfPossible(KEY);
		}

		@Override
		public void afterCompletion(int status) {
			// in case the completion skipped beforeCompletion: nothing may stay bound to the thread
			TransactionSynchronizationManager.unbindResourceIfPossible(KEY);
		}

	}

}
