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

	/** Creates missing cursors of a backfilling consumer, starting after each session's latest clear. */
	int backfill(String contract, String consumer, @Nullable Set<String> types, int limit);

	/** Ends the work of the events before a clear marker: units deleted, cursors moved past it. */
	void endBefore(String contract, String session, long markerIndex, int clearIndex);

	/** A fixed-lane consumer's cursor in a session, or {@code null} when it has none. */
	@Nullable CursorState cursor(String contract, String session, String consumer);

	List<DeadLetter> deadLetters(@Nullable String contract, @Nullable String session, @Nullable String consumer,
			int limit);

	/**
	 * Retries a dead-lettered unit with a fresh failure count, or skips it (done without running).
	 * @return whether there was such a dead unit
	 */
	boolean redrive(String contract, String session, String consumer, long index, boolean retry);

	/** One row per consumer with work not done: pending units, dead ones, and when the oldest pending event was appended. */
	List<PendingWork> pending();

	/** Stores a scheduled task unless one with its id exists. */
	void schedule(ScheduledTask task);

	/**
	 * Takes one due task (skipping tasks other instances are taking) and runs {@code delivery} in the
	 * same transaction, so that it is delivered exactly once.
	 * @return whether a task was taken
	 */
	boolean deliverDue(Instant now, java.util.function.Consumer<ScheduledTask> delivery);

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
	 * A timed append (with {@code events} as a JSON array of {@code {id,type,payload}}) or a timed clear
	 * ({@code events} null).
	 */
	record ScheduledTask(String contract, String session, String id, Instant dueAt, int clearIndex,
			@Nullable String events, @Nullable Long ifLastIndex) {
	}

}
