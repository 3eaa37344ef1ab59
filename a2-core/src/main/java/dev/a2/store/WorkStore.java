package dev.a2.store;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * Consumer work: claims with leases, fenced completion and failure, dead letters and redrive,
 * cursors, and scheduled tasks. Implementations throw {@link dev.a2.A2Exception} with
 * {@code STORE_UNAVAILABLE} when the database cannot be reached.
 */
public interface WorkStore {

	/**
	 * Claims up to {@code limit} runnable units of one session's {@code consumers} (skipping units other
	 * instances hold or are claiming): pending, due, not leased, not dead, and first in their lane.
	 * An instance claims only the work of consumers it runs, so instances of different versions can
	 * share a database.
	 */
	default List<Claim> claim(String contract, String session, Collection<String> consumers, Instant now,
			Instant leaseUntil, int limit) {
		return claim(contract, session, consumers, now, leaseUntil, limit, null);
	}

	/**
	 * Claims as {@link #claim(String, String, Collection, Instant, Instant, int)} does, recording the
	 * claiming instance's {@code owner} ({@link InstanceLiveness#owner()}): the claims are taken over
	 * as soon as that owner is seen gone ({@link #lapseOrphaned()}), not only when their leases lapse.
	 */
	List<Claim> claim(String contract, String session, Collection<String> consumers, Instant now, Instant leaseUntil,
			int limit, @Nullable Integer owner);

	/**
	 * Starts showing this instance alive for as long as the answer is open, under an owner id its
	 * claims record. {@code lost} is told an id this instance lost (its liveness ended without a close,
	 * such as a dropped connection): claims made under it are being taken over, their attempts must stop.
	 * Without liveness ({@link InstanceLiveness#NONE}, the default) claims hold by their leases alone.
	 */
	default InstanceLiveness liveness(java.util.function.IntConsumer lost) {
		return InstanceLiveness.NONE;
	}

	/**
	 * Makes the claims whose owner is no longer alive claimable now; a claim then takes them over as
	 * it takes over a lapsed lease (a new attempt, the old one fenced).
	 * @return how many
	 */
	default int lapseOrphaned() {
		return 0;
	}

	/**
	 * Writes how attempts ended, in one transaction: each one only if it still holds its claim,
	 * with the events a completed one returned.
	 * @param now when, for the time a unit is dead-lettered
	 * @return the claims that were finished; the others were superseded and changed nothing
	 */
	Set<UUID> finish(List<Finish> finishes, Instant now);

	/** Extends the leases of attempts still running; answers the claims still held. */
	Set<UUID> renew(Collection<Claim> claims, Instant leaseUntil);

	/** Gives up claims without running them (a graceful stop): they are claimable at once. */
	void release(Collection<Claim> claims);

	/**
	 * Dead-letters the units whose lease lapsed after their last allowed attempt.
	 * @return how many
	 */
	int expireExhausted(Instant now, int maxAttempts, String error);

	/** Sessions that have runnable work of these consumers, at most {@code limit}. */
	List<SessionRef> sessionsWithDueWork(Instant now, Collection<ConsumerRef> consumers, int limit);

	/**
	 * Creates the missing cursors of a backfilling consumer among the next {@code limit} sessions of
	 * its contract by session id, each cursor starting after its session's latest clear. It looks at
	 * those sessions only, so what one call costs does not grow with the database: calls one after
	 * the other, each going on where the last stopped, walk every session and then start over.
	 * @param after the session id to go on after; {@code ""} to start from the first session
	 * @return the session id the next call goes on after; {@code ""} when this call reached the last
	 * session (or there is none)
	 */
	String backfill(String contract, String consumer, @Nullable Set<String> types, String after, int limit);

	/**
	 * Creates the cursor of a backfilling consumer in one session when it has none, as {@link #backfill}
	 * would when its walk reaches the session: for a {@code consume} that cannot wait for the walk.
	 */
	void backfill(String contract, String session, String consumer, @Nullable Set<String> types);

	/**
	 * Ends the work of the events before a clear marker: units deleted, cursors moved past it. Called
	 * in the transaction that appended the marker, which holds the session's row.
	 */
	void endBefore(String contract, String session, long markerIndex, int clearIndex);

	/** A fixed-lane consumer's cursor in a session, or {@code null} when it has none. */
	@Nullable CursorState cursor(String contract, String session, String consumer);

	List<DeadLetter> deadLetters(@Nullable String contract, @Nullable String session, @Nullable String consumer,
			int limit);

	/** Records the consumers an instance runs, for every instance to know by name ({@link #recordedConsumers}). */
	void recordConsumers(Collection<ConsumerRef> consumers);

	/** The consumers any instance has recorded, of the contract (of every contract when {@code null}). */
	List<ConsumerRef> recordedConsumers(@Nullable String contract);

	/**
	 * Retries a dead-lettered unit with a fresh failure count, or skips it (done without running).
	 * @return whether there was such a dead unit
	 */
	boolean redrive(String contract, String session, String consumer, long index, boolean retry);

	/** One row per consumer with work not done: pending units, dead ones, and when the oldest pending event was appended. */
	List<PendingWork> pending();

	/**
	 * Work not done yet, soonest runnable first and dead letters last: the units and cursors (behind
	 * their target) of {@code consumers}, and the scheduled tasks of {@code contracts}.
	 */
	List<Upcoming> upcoming(Collection<ConsumerRef> consumers, Collection<String> contracts, int limit);

	/** Stores a scheduled task unless one with its id exists. */
	void schedule(ScheduledTask task);

	/**
	 * Takes one due task of {@code contracts} (skipping tasks other instances are taking) and runs
	 * {@code delivery} in the same transaction, so that it is delivered exactly once. That transaction
	 * holds the task's session's row, as an append does, so the session does not change under the
	 * delivery. A delivery that throws leaves the task stored.
	 * @param contracts the contracts whose tasks the caller delivers: the tasks of others (another
	 * application's, on a shared database) are left to them
	 * @return whether a task was taken
	 */
	boolean deliverDue(Instant now, Collection<String> contracts, java.util.function.Consumer<ScheduledTask> delivery);

	/** Makes a stored task due at {@code at} instead: one whose delivery failed, so that the tasks after it go on. */
	void postpone(ScheduledTask task, Instant at);

	/** A session by contract and id. */
	record SessionRef(String contract, String session) {
	}

	/** A consumer by contract and name. */
	record ConsumerRef(String contract, String consumer) {
	}

	/** Where a cursor stands. */
	record CursorState(long position, long target, boolean dead, @Nullable Long failedIndex) {
	}

	/** The work of one consumer not done yet; {@code oldestDueAt} is when its oldest pending event was appended. */
	record PendingWork(String contract, String consumer, long pending, long dead, long lag, @Nullable Instant oldestDueAt) {
	}

	/**
	 * Work not done yet.
	 *
	 * @param kind {@code unit}, {@code cursor} or {@code schedule}
	 * @param consumer the consumer of a unit or cursor; {@code null} for a scheduled task
	 * @param task the id of a scheduled task; {@code null} otherwise
	 * @param index a unit's event index; a cursor's position (processed through); 0 for a task
	 * @param dueAt when a failed unit may run again, or when a task is due; {@code null} for at once
	 * @param leaseUntil when the claim of a unit being run lapses; {@code null} when unclaimed
	 * @param blocked whether a unit waits behind an earlier unit of its lane (one dead-lettered, for
	 * instance) rather than for a time
	 */
	record Upcoming(String kind, String contract, String session, @Nullable String consumer, @Nullable String task,
			long index, int attempt, int failures, @Nullable Instant dueAt, @Nullable Instant leaseUntil, boolean dead,
			boolean blocked, @Nullable String lastError) {

		/**
		 * From when it may run: after its back-off and its claim's lease (a lease lapses just after its
		 * instant); {@link Instant#MIN} when it may run now; {@code null} when no time makes it runnable
		 * (dead-lettered, or blocked behind an earlier unit of its lane).
		 */
		public @Nullable Instant runnableAt() {
			if (this.dead || this.blocked) {
				return null;
			}
			Instant at = Instant.MIN;
			if (this.dueAt != null && this.dueAt.isAfter(at)) {
				at = this.dueAt;
			}
			if (this.leaseUntil != null && this.leaseUntil.plusNanos(1000).isAfter(at)) {
				at = this.leaseUntil.plusNanos(1000);
			}
			return at;
		}

		@Override
		public String toString() {
			StringBuilder text = new StringBuilder();
			if (this.task != null) {
				text.append("scheduled task ").append(this.task).append(" of ").append(this.contract).append('/').append(this.session);
			}
			else {
				text.append(this.consumer).append(" on ").append(this.contract).append('/').append(this.session)
					.append(this.kind.equals("cursor") ? " after #" : " #").append(this.index)
					.append(" (attempt ").append(this.attempt).append(", failures ").append(this.failures).append(')');
			}
			if (this.dead) {
				text.append(" dead-lettered");
			}
			else if (this.blocked) {
				text.append(" waiting behind an earlier unit of its lane");
			}
			else if (this.leaseUntil != null) {
				text.append(" claimed until ").append(this.leaseUntil);
			}
			if (!this.dead && this.dueAt != null) {
				text.append(this.task != null ? " due at " : " retrying at ").append(this.dueAt);
			}
			if (this.lastError != null) {
				text.append(" last error: ").append(this.lastError);
			}
			return text.toString();
		}

	}

	/**
	 * A timed append (with {@code events} as a JSON array of {@code {id,type,payload}}) or a timed clear
	 * ({@code events} null).
	 */
	record ScheduledTask(String contract, String session, String id, Instant dueAt, int clearIndex,
			@Nullable String events, @Nullable Long ifLastIndex) {
	}

}
