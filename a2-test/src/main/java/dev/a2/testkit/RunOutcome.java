package dev.a2.testkit;

/** How a run of a consumer's code ended, as the {@link RunJournal} saw it. */
public enum RunOutcome {

	/** Still running (or stalled). */
	RUNNING,

	/** The code returned; its finish was written (or is being written). */
	COMPLETED,

	/** The code threw; the unit retries after its back-off. */
	FAILED,

	/** The code threw for the last allowed time, or threw a {@code NonRetriableException}. */
	DEAD_LETTERED,

	/**
	 * A batch of a fixed lane threw: A2 runs its events again one at a time to find the one that
	 * fails; the batch counts as no failure.
	 */
	SPLIT,

	/** Its signal was aborted: an {@code abortOn} event arrived, the session was cleared. */
	ABORTED,

	/** A crash the kit staged after the code returned: nothing returned was committed, the lease lapses. */
	CRASHED,

	/** Another attempt had taken the unit over: nothing this one returned was committed. */
	SUPERSEDED

}
