package dev.a2.store.postgres;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntConsumer;

import javax.sql.DataSource;

import dev.a2.Cause;
import dev.a2.store.StoreFailures;
import dev.a2.store.StoreTransactionTemplate;
import dev.a2.store.Claim;
import dev.a2.store.DeadLetter;
import dev.a2.store.EventStore;
import dev.a2.store.Finish;
import dev.a2.store.InstanceLiveness;
import dev.a2.store.StoredEvent;
import dev.a2.store.WorkStore;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The {@link WorkStore} on PostgreSQL: tables {@code a2_work} (units of independent and keyed
 * consumers), {@code a2_cursor} (fixed-lane cursors), {@code a2_schedule} and {@code a2_consumer} (the
 * names of the consumers instances run). The work rows are created by the append that causes them
 * ({@link PostgresEventStore}), in its transaction.
 * <p>
 * Claims take the runnable units of a session in one statement ({@code FOR UPDATE SKIP LOCKED}, so
 * instances never wait for each other), each with a fresh claim token; finishing is fenced on that
 * token, so an attempt that lost its claim can neither complete nor fail its unit. A claim records
 * its instance ({@code owner}); the sweep makes the claims of an instance PostgreSQL no longer sees
 * alive claimable at once ({@link PostgresInstanceLiveness}), and those of one that stalls when their
 * leases lapse.
 * <p>
 * Writers that wait for rows take them in one order, so that two never wait on each other: a
 * session's row first (sessions by contract and id), then its cursor rows by consumer, then its
 * units. Appends, finishes, clears, backfills and deliveries of scheduled tasks (the session's row
 * before the task's) keep it; claims, renewals and the sweep's lapse and dead-lettering of leases
 * skip a locked row rather than wait.
 * <p>
 * Every write runs in a transaction of the given transaction manager (joining the application's when
 * one is active), never on a bare pooled connection: a pool that hands out connections without
 * auto-commit ({@code spring.datasource.hikari.auto-commit=false}) rolls back what such a
 * connection wrote when it goes back to the pool.
 */
public final class PostgresWorkStore implements WorkStore {

	private static final String EVENT_COLUMNS = """
			e.idx, e.id, e.type, e.payload::text AS payload, e.created_at, e.clear_index,
			e.cause_consumer, e.cause_lane, e.cause_index, e.cause_attempt""";

	/** A claimable unit: not dead, due, not leased (or its lease lapsed with attempts left). */
	private static final String RUNNABLE = """
			NOT c.dead AND (c.due_at IS NULL OR c.due_at <= :now)
			AND (c.lease_until IS NULL OR (c.lease_until < :now AND c.attempt - c.attempts_before < :maxAttempts))""";

	/**
	 * Every claim becomes one run on one of the instance's run permits, so units and cursors together
	 * stay within the limit: cursors first (at most one per fixed-lane consumer, each a batch of
	 * events), units take what is left. Each claim's token is derived from a random nonce of the
	 * statement and the row's key: {@code md5} is immutable, and Citus refuses a volatile function such
	 * as {@code gen_random_uuid()} in an {@code UPDATE} of a distributed table.
	 */
	private static final String CLAIM_TEMPLATE = """
			WITH picked_cursors AS (
			    SELECT c.consumer FROM a2_cursor c
			    WHERE c.contract = :contract AND c.session_id = :session AND c.consumer = ANY(:consumers)
			      AND c.position < c.target AND %1$s
			    LIMIT :limit
			    FOR UPDATE SKIP LOCKED
			), picked_units AS (
			    SELECT c.consumer, c.idx FROM a2_work c
			    WHERE c.contract = :contract AND c.session_id = :session AND c.consumer = ANY(:consumers) AND %1$s
			      AND (c.lane_key IS NULL OR NOT EXISTS (
			          SELECT 1 FROM a2_work p
			          WHERE p.contract = :contract AND p.session_id = :session AND p.consumer = c.consumer
			            AND p.lane_key = c.lane_key AND p.idx < c.idx))
			    ORDER BY c.idx
			    LIMIT :limit - (SELECT count(*) FROM picked_cursors)
			    FOR UPDATE SKIP LOCKED
			), units AS (
			    UPDATE a2_work w SET attempt = w.attempt + 1, claim = md5(:nonce || '/' || w.consumer || '/' || w.idx::text)::uuid,
			        lease_until = :leaseUntil,
			        owner = :owner
			    FROM picked_units p
			    WHERE w.contract = :contract AND w.session_id = :session AND w.consumer = p.consumer AND w.idx = p.idx%4$s
			    RETURNING w.consumer, w.idx, w.lane_key, w.attempt, w.failures, w.claim
			), cursors AS (
			    UPDATE a2_cursor k SET attempt = k.attempt + 1, claim = md5(:nonce || '/' || k.consumer)::uuid,
			        lease_until = :leaseUntil,
			        owner = :owner
			    FROM picked_cursors p
			    WHERE k.contract = :contract AND k.session_id = :session AND k.consumer = p.consumer%4$s
			    RETURNING k.consumer, k.position, k.target, k.types, k.attempt, k.failures, k.claim
			)
			SELECT false AS is_cursor, u.consumer, u.lane_key, 0 AS position, 0 AS target, u.attempt, u.failures, u.claim, %2$s
			FROM units u JOIN a2_event e ON e.contract = :contract AND e.session_id = :session AND e.idx = u.idx
			UNION ALL
			SELECT true, k.consumer, NULL, k.position, k.target, k.attempt, k.failures, k.claim, e.*
			FROM cursors k LEFT JOIN LATERAL (
			    SELECT %2$s FROM a2_event e
			    WHERE e.contract = :contract AND e.session_id = :session AND e.idx > k.position AND e.idx <= k.target
			      AND e.type <> '%3$s' AND (k.types IS NULL OR e.type = ANY(k.types))
			      -- a backfilling cursor an append created starts at 0: what a clear hid is not for it
			      AND e.idx > (SELECT s.cleared_at FROM a2_session s WHERE s.contract = :contract AND s.session_id = :session)
			    ORDER BY e.idx
			    LIMIT :cursorBatch
			) e ON true
			ORDER BY 1, 2, idx""";

	/** The claim in a transaction: on Citus, or in a transaction of the caller's. */
	private static final String CLAIM = CLAIM_TEMPLATE.formatted(RUNNABLE, EVENT_COLUMNS, EventStore.CLEAR_MARKER, "");

	/**
	 * The claim in auto-commit, one round trip. It writes only leases, whose commit need not wait for the
	 * disk ({@link #leaseOnly}): {@code set_config} is evaluated for each row it leases, and holds for
	 * the statement's own transaction. Not on Citus, which refuses a volatile function in an
	 * {@code UPDATE} of a distributed table.
	 */
	private static final String CLAIM_ON_ITS_OWN = CLAIM_TEMPLATE.formatted(RUNNABLE, EVENT_COLUMNS,
			EventStore.CLEAR_MARKER, " AND set_config('synchronous_commit', 'off', true) IS NOT NULL");

	private static final String FINISH_UNITS = """
			UPDATE a2_work w
			SET failures = w.failures + 1, last_error = f.error, due_at = f.retry_at, claim = NULL, lease_until = NULL,
			    dead = f.dead, failed_at = CASE WHEN f.dead THEN :now END
			FROM unnest(:contracts, :sessions, :consumers, :indexes, :claims, :errors, :retryAts, :deads)
			     AS f(contract, session_id, consumer, idx, claim, error, retry_at, dead)
			WHERE w.contract = f.contract AND w.session_id = f.session_id AND w.consumer = f.consumer AND w.idx = f.idx
			  AND w.claim = f.claim
			  AND w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			RETURNING f.claim""";

	private static final String COMPLETE_UNITS = """
			DELETE FROM a2_work w
			USING unnest(:contracts, :sessions, :consumers, :indexes, :claims) AS f(contract, session_id, consumer, idx, claim)
			WHERE w.contract = f.contract AND w.session_id = f.session_id AND w.consumer = f.consumer AND w.idx = f.idx
			  AND w.claim = f.claim
			  AND w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			RETURNING w.claim""";

	/**
	 * A cursor's failure: it keeps what completed before the failing event, and counts the failures and
	 * attempts of the event now at its head, from 1 again when the attempt completed events before it
	 * failed (the attempt was that event's first): an attempt limit counted across the events before
	 * would dead-letter the new head the first time its instance died.
	 */
	private static final String FINISH_CURSORS = """
			UPDATE a2_cursor k
			SET position = f.idx, failures = CASE WHEN f.idx > k.position THEN 1 ELSE k.failures + 1 END,
			    attempt = CASE WHEN f.idx > k.position THEN 1 ELSE k.attempt END,
			    attempts_before = CASE WHEN f.idx > k.position THEN 0 ELSE k.attempts_before END, last_error = f.error, due_at = f.retry_at, claim = NULL,
			    lease_until = NULL, dead = f.dead, failed_idx = f.failed_idx, failed_at = CASE WHEN f.dead THEN :now END
			FROM unnest(:contracts, :sessions, :consumers, :indexes, :claims, :errors, :retryAts, :deads, :failedIndexes)
			     AS f(contract, session_id, consumer, idx, claim, error, retry_at, dead, failed_idx)
			WHERE k.contract = f.contract AND k.session_id = f.session_id AND k.consumer = f.consumer AND k.claim = f.claim
			  AND k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			RETURNING f.claim""";

	private static final String COMPLETE_CURSORS = """
			UPDATE a2_cursor k
			SET position = f.idx, attempt = 0, attempts_before = 0, failures = 0, due_at = NULL, claim = NULL,
			    lease_until = NULL, last_error = NULL, failed_idx = NULL, failed_at = NULL
			FROM unnest(:contracts, :sessions, :consumers, :indexes, :claims) AS f(contract, session_id, consumer, idx, claim)
			WHERE k.contract = f.contract AND k.session_id = f.session_id AND k.consumer = f.consumer AND k.claim = f.claim
			  AND k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			RETURNING f.claim""";

	/**
	 * Locks, in one order, the sessions a finish appends to: appends lock a session and then its
	 * cursor rows, so a finish must not hold a cursor row while it waits for a session.
	 */
	private static final String LOCK_SESSIONS = """
			SELECT s.contract, s.session_id FROM a2_session s
			JOIN unnest(:contracts, :sessions) AS f(contract, session_id) ON s.contract = f.contract AND s.session_id = f.session_id
			WHERE s.contract = ANY(:contractSet) AND s.session_id = ANY(:sessionSet)
			ORDER BY s.contract, s.session_id
			FOR UPDATE OF s""";

	/**
	 * Locks cursor rows in one order (an append locks its session's cursor rows by consumer), before a
	 * finish changes several of them in whatever order its plan visits them.
	 */
	private static final String LOCK_CURSORS = """
			SELECT 1 FROM a2_cursor k
			JOIN unnest(:contracts, :sessions, :consumers) AS f(contract, session_id, consumer)
			  ON k.contract = f.contract AND k.session_id = f.session_id AND k.consumer = f.consumer
			WHERE k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			ORDER BY k.contract, k.session_id, k.consumer
			FOR UPDATE OF k""";

	/**
	 * Extends the leases of the claims still held, and answers those claims. It never waits for a row
	 * lock: a heartbeat that waited could join a deadlock (finishes and appends lock the same rows),
	 * and a late heartbeat lets leases lapse. A row locked right now (most likely its attempt is being
	 * finished) keeps its lease until the next heartbeat and still answers as held when it was, as
	 * of this statement's snapshot; a finish is fenced by its claim either way.
	 */
	private static final String RENEW = """
			WITH f AS (
			    SELECT * FROM unnest(:contracts, :sessions, :consumers, :indexes, :claims)
			        AS f(contract, session_id, consumer, idx, claim)
			), free_units AS (
			    SELECT w.contract, w.session_id, w.consumer, w.idx FROM a2_work w
			    JOIN f ON w.contract = f.contract AND w.session_id = f.session_id AND w.consumer = f.consumer
			          AND w.idx = f.idx AND w.claim = f.claim
			    WHERE w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			    FOR UPDATE OF w SKIP LOCKED
			), units AS (
			    UPDATE a2_work w SET lease_until = :leaseUntil
			    FROM free_units l
			    WHERE w.contract = l.contract AND w.session_id = l.session_id AND w.consumer = l.consumer AND w.idx = l.idx
			      AND w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			), free_cursors AS (
			    SELECT k.contract, k.session_id, k.consumer FROM a2_cursor k
			    JOIN f ON k.contract = f.contract AND k.session_id = f.session_id AND k.consumer = f.consumer
			          AND k.claim = f.claim
			    WHERE k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			    FOR UPDATE OF k SKIP LOCKED
			), cursors AS (
			    UPDATE a2_cursor k SET lease_until = :leaseUntil
			    FROM free_cursors l
			    WHERE k.contract = l.contract AND k.session_id = l.session_id AND k.consumer = l.consumer
			      AND k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			)
			SELECT f.claim FROM f
			WHERE EXISTS (SELECT 1 FROM a2_work w
			              WHERE w.contract = f.contract AND w.session_id = f.session_id AND w.consumer = f.consumer
			                AND w.idx = f.idx AND w.claim = f.claim
			                AND w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet))
			   OR EXISTS (SELECT 1 FROM a2_cursor k
			              WHERE k.contract = f.contract AND k.session_id = f.session_id AND k.consumer = f.consumer
			                AND k.claim = f.claim
			                AND k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet))""";

	/**
	 * Gives back the claims of a stopping instance's runs: claimable at once elsewhere. A released
	 * attempt is no takeover (its instance stopped, nothing crashed), so it leaves the count of
	 * takeovers that dead-letters a unit, and keeps its number: a reply's next attempt is a new one.
	 */
	private static final String RELEASE = """
			WITH units AS (
			    UPDATE a2_work w SET claim = NULL, lease_until = NULL, attempts_before = w.attempt
			    FROM unnest(:claims) AS f(claim) WHERE w.claim = f.claim AND w.lease_until IS NOT NULL
			      AND w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			)
			UPDATE a2_cursor k SET claim = NULL, lease_until = NULL, attempts_before = k.attempt
			FROM unnest(:claims) AS f(claim) WHERE k.claim = f.claim
			  AND k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)""";

	/**
	 * The owners of the leases held now, with their sessions: a read, which locks nothing (on Citus
	 * it reads every shard). Read before the live owners, so that an owner seen here and not there is
	 * gone: an instance takes its lock before it claims.
	 */
	private static final String LEASE_OWNERS = """
			SELECT contract, session_id, owner FROM a2_work WHERE lease_until > '-infinity' AND owner IS NOT NULL
			UNION
			SELECT contract, session_id, owner FROM a2_cursor WHERE lease_until > '-infinity' AND owner IS NOT NULL""";

	/** The instances alive, by their liveness locks ({@link PostgresInstanceLiveness}). */
	private static final String LIVE_OWNERS = """
			SELECT l.objid::bigint AS owner FROM pg_locks l
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = %1$s::oid
			  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"""
		.formatted(PostgresInstanceLiveness.KEY_SPACE);

	/**
	 * Claims whose owner no longer holds its liveness lock (the instance died or lost its connection)
	 * lapse at once: {@code -infinity} is before any instance's clock, so the next claim anywhere takes
	 * them over as it takes over a lapsed lease (attempt + 1, a new token that fences the old attempt),
	 * and one past the attempt limit is dead-lettered. Rows being claimed or finished right now are
	 * skipped for the next sweep.
	 */
	private static final String LAPSE_ORPHANED = """
			WITH orphaned_units AS (
			    SELECT w.contract, w.session_id, w.consumer, w.idx FROM a2_work w
			    WHERE w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			      AND w.lease_until > '-infinity' AND w.owner = ANY(:owners)
			    FOR UPDATE OF w SKIP LOCKED
			), units AS (
			    UPDATE a2_work w SET lease_until = '-infinity'
			    FROM orphaned_units o
			    WHERE w.contract = o.contract AND w.session_id = o.session_id AND w.consumer = o.consumer AND w.idx = o.idx
			      AND w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			    RETURNING 1
			), orphaned_cursors AS (
			    SELECT k.contract, k.session_id, k.consumer FROM a2_cursor k
			    WHERE k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			      AND k.lease_until > '-infinity' AND k.owner = ANY(:owners)
			    FOR UPDATE OF k SKIP LOCKED
			), cursors AS (
			    UPDATE a2_cursor k SET lease_until = '-infinity'
			    FROM orphaned_cursors o
			    WHERE k.contract = o.contract AND k.session_id = o.session_id AND k.consumer = o.consumer
			      AND k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			    RETURNING 1
			)
			SELECT (SELECT count(*) FROM units) + (SELECT count(*) FROM cursors)""";

	/** The sessions with a lease lapsed after its last allowed attempt: a read, which locks nothing. */
	private static final String EXHAUSTED_SESSIONS = """
			SELECT contract, session_id FROM a2_work WHERE lease_until < :now AND attempt - attempts_before >= :maxAttempts AND NOT dead
			UNION
			SELECT contract, session_id FROM a2_cursor WHERE lease_until < :now AND attempt - attempts_before >= :maxAttempts AND NOT dead""";

	/**
	 * Dead-letters the units and cursors whose last allowed attempt lapsed. Like the lapse of orphaned
	 * claims it skips rows locked right now (a clear or a finish of their session) for the next sweep,
	 * rather than wait for them in an order of its own.
	 */
	private static final String EXPIRE_EXHAUSTED = """
			WITH exhausted_units AS (
			    SELECT w.contract, w.session_id, w.consumer, w.idx FROM a2_work w
			    WHERE w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			      AND w.lease_until < :now AND w.attempt - w.attempts_before >= :maxAttempts AND NOT w.dead
			    FOR UPDATE OF w SKIP LOCKED
			), units AS (
			    UPDATE a2_work w SET dead = true, last_error = :error, failed_at = :now, claim = NULL, lease_until = NULL
			    FROM exhausted_units x
			    WHERE w.contract = x.contract AND w.session_id = x.session_id AND w.consumer = x.consumer AND w.idx = x.idx
			      AND w.contract = ANY(:contractSet) AND w.session_id = ANY(:sessionSet)
			    RETURNING 1
			), exhausted_cursors AS (
			    SELECT k.contract, k.session_id, k.consumer FROM a2_cursor k
			    WHERE k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			      AND k.lease_until < :now AND k.attempt - k.attempts_before >= :maxAttempts AND NOT k.dead
			    FOR UPDATE OF k SKIP LOCKED
			), cursors AS (
			    UPDATE a2_cursor k SET dead = true, last_error = :error, failed_at = :now, claim = NULL, lease_until = NULL,
			        failed_idx = (SELECT min(e.idx) FROM a2_event e
			                      WHERE e.contract = k.contract AND e.session_id = k.session_id AND e.idx > k.position
			                        AND e.session_id = ANY(:sessionSet)
			                        AND e.type <> '%s' AND (k.types IS NULL OR e.type = ANY(k.types)))
			    FROM exhausted_cursors x
			    WHERE k.contract = x.contract AND k.session_id = x.session_id AND k.consumer = x.consumer
			      AND k.contract = ANY(:contractSet) AND k.session_id = ANY(:sessionSet)
			    RETURNING 1
			)
			SELECT (SELECT count(*) FROM units) + (SELECT count(*) FROM cursors)""".formatted(EventStore.CLEAR_MARKER);

	/**
	 * The sessions with work a claim would take: a unit of a keyed lane behind an earlier one of its lane
	 * (dead, backing off or running) is not such work. Counted as due, a lane blocked by a dead letter
	 * had its session drained at every sweep for ever, for nothing, and more such sessions than a
	 * sweep takes crowded out every other session's retries and takeovers.
	 */
	private static final String DUE_SESSIONS = """
			WITH mine AS (SELECT * FROM unnest(:contracts, :consumers) AS m(contract, consumer))
			(SELECT c.contract, c.session_id FROM a2_work c JOIN mine m ON m.contract = c.contract AND m.consumer = c.consumer
			 WHERE %1$s
			   AND (c.lane_key IS NULL OR NOT EXISTS (
			       SELECT 1 FROM a2_work p
			       WHERE p.contract = c.contract AND p.session_id = c.session_id AND p.consumer = c.consumer
			         AND p.lane_key = c.lane_key AND p.idx < c.idx))
			 LIMIT :limit)
			UNION
			(SELECT c.contract, c.session_id FROM a2_cursor c JOIN mine m ON m.contract = c.contract AND m.consumer = c.consumer
			 WHERE c.position < c.target AND %1$s LIMIT :limit)""".formatted(RUNNABLE);

	/**
	 * The sessions a backfill looks at: the next {@code limit} by id. A backfill that looked for
	 * missing cursors across the whole contract would read every session at every sweep once none is
	 * missing any more.
	 */
	private static final String BACKFILL_WINDOW = """
			SELECT count(*) AS scanned, max(w.session_id) AS reached
			FROM (SELECT session_id FROM a2_session WHERE contract = :contract AND session_id > :after
			      ORDER BY session_id LIMIT :limit) w""";

	/**
	 * Creates the cursors by session, the order in which a group-commit round creates the same rows:
	 * an insert waits for another transaction's uncommitted row of the same key, so in two orders each
	 * could hold a row the other waits for.
	 */
	private static final String BACKFILL = """
			INSERT INTO a2_cursor (contract, session_id, consumer, position, target, types)
			SELECT s.contract, s.session_id, :consumer, s.cleared_at, s.last_index, :types::text[]
			FROM a2_session s
			WHERE s.contract = :contract AND s.session_id > :after AND s.session_id <= :reached
			  AND s.last_index > s.cleared_at
			  AND NOT EXISTS (SELECT 1 FROM a2_cursor k
			                  WHERE k.contract = s.contract AND k.session_id = s.session_id AND k.consumer = :consumer)
			ORDER BY s.session_id
			ON CONFLICT (contract, session_id, consumer) DO NOTHING""";

	/** {@link #BACKFILL} for one session. */
	private static final String BACKFILL_SESSION = """
			INSERT INTO a2_cursor (contract, session_id, consumer, position, target, types)
			SELECT s.contract, s.session_id, :consumer, s.cleared_at, s.last_index, :types::text[]
			FROM a2_session s
			WHERE s.contract = :contract AND s.session_id = :session AND s.last_index > s.cleared_at
			ON CONFLICT (contract, session_id, consumer) DO NOTHING""";

	private static final String END_UNITS_BEFORE = """
			DELETE FROM a2_work WHERE contract = :contract AND session_id = :session AND idx < :marker""";

	/** Locks the cursor rows by consumer first: an update alone takes them in the order of its plan. */
	private static final String MOVE_CURSORS_PAST = """
			WITH locked AS (
			    SELECT consumer FROM a2_cursor WHERE contract = :contract AND session_id = :session
			    ORDER BY consumer
			    FOR UPDATE
			)
			UPDATE a2_cursor k
			SET position = greatest(k.position, :marker), target = greatest(k.target, :marker), attempt = 0, attempts_before = 0,
			    failures = 0,
			    due_at = NULL, claim = NULL, lease_until = NULL, dead = false, last_error = NULL, failed_idx = NULL,
			    failed_at = NULL
			FROM locked l
			WHERE k.contract = :contract AND k.session_id = :session AND k.consumer = l.consumer""";

	private static final String CANCEL_SCHEDULES_BEFORE = """
			DELETE FROM a2_schedule WHERE contract = :contract AND session_id = :session AND clear_index < :clearIndex""";

	private static final String CURSOR = """
			SELECT position, target, dead, failed_idx FROM a2_cursor
			WHERE contract = :contract AND session_id = :session AND consumer = :consumer""";

	private static final String DEAD_LETTERS = """
			SELECT * FROM (
			    SELECT w.contract, w.session_id, w.consumer, w.lane_key AS lane, w.idx, e.id, e.type, w.attempt, w.failures,
			           w.last_error, w.failed_at
			    FROM a2_work w JOIN a2_event e ON e.contract = w.contract AND e.session_id = w.session_id AND e.idx = w.idx
			    WHERE w.dead %1$s
			    UNION ALL
			    SELECT w.contract, w.session_id, w.consumer, NULL, w.failed_idx, e.id, e.type, w.attempt, w.failures,
			           w.last_error, w.failed_at
			    FROM a2_cursor w JOIN a2_event e ON e.contract = w.contract AND e.session_id = w.session_id AND e.idx = w.failed_idx
			    WHERE w.dead %1$s
			) dead
			ORDER BY failed_at DESC, contract, session_id, consumer
			LIMIT :limit""".formatted("""
			AND (CAST(:contract AS text) IS NULL OR w.contract = :contract)
			      AND (CAST(:session AS text) IS NULL OR w.session_id = :session)
			      AND (CAST(:consumer AS text) IS NULL OR w.consumer = :consumer)""");

	/** The one statement of {@code a2_consumer} that writes: a name recorded stays. */
	private static final String RECORD_CONSUMERS = """
			INSERT INTO a2_consumer (contract, name)
			SELECT * FROM unnest(:contracts, :names)
			ON CONFLICT DO NOTHING""";

	private static final String RECORDED_CONSUMERS = """
			SELECT contract, name FROM a2_consumer WHERE CAST(:contract AS text) IS NULL OR contract = :contract
			ORDER BY contract, name""";

	private static final String RETRY_UNIT = """
			UPDATE a2_work SET dead = false, attempts_before = attempt, failures = 0, due_at = NULL, claim = NULL,
			    lease_until = NULL, last_error = NULL, failed_at = NULL
			WHERE contract = :contract AND session_id = :session AND consumer = :consumer AND idx = :index AND dead""";

	private static final String SKIP_UNIT = """
			DELETE FROM a2_work
			WHERE contract = :contract AND session_id = :session AND consumer = :consumer AND idx = :index AND dead""";

	private static final String REDRIVE_CURSOR = """
			UPDATE a2_cursor
			SET position = CASE WHEN :retry THEN position ELSE failed_idx END, dead = false,
			    attempt = CASE WHEN :retry THEN attempt ELSE 0 END, attempts_before = CASE WHEN :retry THEN attempt ELSE 0 END,
			    failures = 0,
			    due_at = NULL, claim = NULL, lease_until = NULL, last_error = NULL, failed_idx = NULL, failed_at = NULL
			WHERE contract = :contract AND session_id = :session AND consumer = :consumer AND failed_idx = :index AND dead""";

	/**
	 * One row per consumer, whether its work is units, cursors or both. Lag is how far behind the log
	 * the consumer is: its units not done, or a cursor's distance in indexes to the last event of its
	 * types; what waits behind a dead letter included. A dead cursor with events after its dead letter
	 * is pending since the first of them, as the units behind a keyed lane's dead letter are: an alert
	 * on the oldest pending age must fire for a stuck fixed lane too.
	 */
	private static final String PENDING = """
			SELECT contract, consumer, sum(pending) AS pending, sum(dead) AS dead, sum(lag) AS lag, min(oldest) AS oldest FROM (
			    SELECT w.contract, w.consumer, count(*) FILTER (WHERE NOT w.dead) AS pending,
			           count(*) FILTER (WHERE w.dead) AS dead, count(*) AS lag,
			           min(e.created_at) FILTER (WHERE NOT w.dead) AS oldest
			    FROM a2_work w JOIN a2_event e ON e.contract = w.contract AND e.session_id = w.session_id AND e.idx = w.idx
			    GROUP BY w.contract, w.consumer
			    UNION ALL
			    SELECT k.contract, k.consumer, count(*) FILTER (WHERE k.waiting < k.target),
			           count(*) FILTER (WHERE k.dead), coalesce(sum(greatest(k.target - k.position, 0)), 0),
			           min(e.created_at) FILTER (WHERE k.waiting < k.target)
			    FROM (SELECT c.*, CASE WHEN c.dead THEN c.failed_idx ELSE c.position END AS waiting FROM a2_cursor c) k
			    LEFT JOIN a2_event e ON e.contract = k.contract AND e.session_id = k.session_id AND e.idx = k.waiting + 1
			    GROUP BY k.contract, k.consumer
			) per_table
			GROUP BY contract, consumer""";

	private static final String UPCOMING = """
			WITH mine AS (SELECT * FROM unnest(:contracts, :consumers) AS m(contract, consumer))
			SELECT * FROM (
			    SELECT 'unit' AS kind, w.contract, w.session_id, w.consumer, NULL AS task, w.idx, w.attempt, w.failures,
			           w.due_at, w.lease_until, w.dead,
			           w.lane_key IS NOT NULL AND EXISTS (
			               SELECT 1 FROM a2_work p
			               WHERE p.contract = w.contract AND p.session_id = w.session_id AND p.consumer = w.consumer
			                 AND p.lane_key = w.lane_key AND p.idx < w.idx) AS blocked,
			           w.last_error
			    FROM a2_work w JOIN mine m ON m.contract = w.contract AND m.consumer = w.consumer
			    UNION ALL
			    SELECT 'cursor', k.contract, k.session_id, k.consumer, NULL, k.position, k.attempt, k.failures,
			           k.due_at, k.lease_until, k.dead, false, k.last_error
			    FROM a2_cursor k JOIN mine m ON m.contract = k.contract AND m.consumer = k.consumer
			    WHERE k.position < k.target OR k.dead
			    UNION ALL
			    SELECT 'schedule', t.contract, t.session_id, NULL, t.id, 0, 0, 0, t.due_at, NULL, false, false, NULL
			    FROM a2_schedule t WHERE t.contract = ANY(:scheduleContracts)
			) upcoming
			ORDER BY dead, blocked, greatest(due_at, lease_until) NULLS FIRST, contract, session_id, idx
			LIMIT :limit""";

	private static final String SCHEDULE = """
			INSERT INTO a2_schedule (contract, session_id, id, due_at, clear_index, events, if_last_index)
			VALUES (:contract, :session, :id, :dueAt, :clearIndex, CAST(:events AS jsonb), :ifLastIndex)
			ON CONFLICT (contract, session_id, id) DO NOTHING""";

	/** Tasks due now, oldest first: a read, which locks nothing; {@link #TAKE} takes one. */
	private static final String DUE_TASKS = """
			SELECT contract, session_id, id FROM a2_schedule WHERE due_at <= :now AND contract = ANY(:contracts)
			ORDER BY due_at LIMIT :limit""";

	private static final String POSTPONE = """
			UPDATE a2_schedule SET due_at = :dueAt WHERE contract = :contract AND session_id = :session AND id = :id""";

	/**
	 * Locks the row of a task's session before the task: its delivery appends to the session or
	 * clears it, and a clear takes the session's row before it deletes the session's tasks. It also
	 * keeps the session where the delivery finds it until the delivery commits. A session never
	 * written has no row yet: it is created here (as the append would create it, after the task's
	 * row), since a clear of it creates the row and then waits for the task's. {@code WHERE false}
	 * locks an existing row without writing a new version of it.
	 */
	private static final String LOCK_SESSION = """
			INSERT INTO a2_session AS s (contract, session_id) VALUES (:contract, :session)
			ON CONFLICT (contract, session_id) DO UPDATE SET last_index = s.last_index WHERE false""";

	/** Takes one task by its key unless another instance is taking it (its session's shard alone on Citus). */
	private static final String TAKE = """
			DELETE FROM a2_schedule t
			WHERE t.contract = :contract AND t.session_id = :session AND t.id = :id
			  AND (t.contract, t.session_id, t.id) = (
			    SELECT contract, session_id, id FROM a2_schedule
			    WHERE contract = :contract AND session_id = :session AND id = :id AND due_at <= :now
			    FOR UPDATE SKIP LOCKED)
			RETURNING t.contract, t.session_id, t.id, t.due_at, t.clear_index, t.events::text AS events, t.if_last_index""";

	/** How many due tasks one look reads: taking one of them, a sweep moves past those others are taking. */
	private static final int DUE_TASKS_READ = 16;

	/** The most events a cursor claim takes when no other number is given. */
	public static final int CURSOR_BATCH = 256;

	private final DataSource dataSource;

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	private final EventStore events;

	private final int maxAttempts;

	private final int cursorBatch;

	private final CitusTables citus;

	/**
	 * @param events the store that appends the events completed attempts return, in the same
	 * transaction (it must run on the same transaction manager)
	 * @param maxAttempts how many attempts a unit may start; a lapsed lease after the last is a dead letter
	 */
	public PostgresWorkStore(DataSource dataSource, PlatformTransactionManager transactionManager, EventStore events,
			int maxAttempts) {
		this(dataSource, transactionManager, events, maxAttempts, CURSOR_BATCH);
	}

	/**
	 * @param cursorBatch the most events one claim of a fixed-lane cursor takes: its run goes through
	 * them in order and completes them with one finish
	 */
	public PostgresWorkStore(DataSource dataSource, PlatformTransactionManager transactionManager, EventStore events,
			int maxAttempts, int cursorBatch) {
		this.dataSource = dataSource;
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = new StoreTransactionTemplate(transactionManager);
		this.events = events;
		this.maxAttempts = maxAttempts;
		this.cursorBatch = cursorBatch;
		this.citus = new CitusTables(dataSource);
	}

	public PostgresWorkStore(DataSource dataSource, EventStore events, int maxAttempts) {
		this(dataSource, new DataSourceTransactionManager(dataSource), events, maxAttempts);
	}

	@Override
	public List<Claim> claim(String contract, String session, Collection<String> consumers, Instant now,
			Instant leaseUntil, int limit, @Nullable Integer owner) {
		return StoreFailures.guard(() -> {
			// a caller's transaction, or a connection bound without one (a SUPPORTS scope), is left as it is
			boolean onItsOwn = !TransactionSynchronizationManager.isActualTransactionActive()
					&& !TransactionSynchronizationManager.hasResource(this.dataSource);
			if (onItsOwn && !this.citus.distributed()) {
				return AutoCommitted.run(this.dataSource,
						() -> claim(this.jdbc.sql(CLAIM_ON_ITS_OWN), contract, session, consumers, now, leaseUntil, limit, owner));
			}
			return this.transactions.execute((status) -> claim(leaseOnly(status).sql(CLAIM), contract, session, consumers, now,
					leaseUntil, limit, owner));
		});
	}

	private List<Claim> claim(JdbcClient.StatementSpec statement, String contract, String session,
			Collection<String> consumers, Instant now, Instant leaseUntil, int limit, @Nullable Integer owner) {
		return statement.param("nonce", UUID.randomUUID().toString())
			.param("owner", owner, java.sql.Types.INTEGER)
			.param("contract", contract)
			.param("session", session)
			.param("consumers", SqlArrays.of("text", consumers.toArray()))
			.param("now", time(now))
			.param("leaseUntil", time(leaseUntil))
			.param("maxAttempts", this.maxAttempts)
			.param("limit", limit)
			.param("cursorBatch", this.cursorBatch)
			.query((ResultSet rs) -> {
				Map<UUID, Claim> claims = new LinkedHashMap<>();
				while (rs.next()) {
					Claim row = claim(contract, session, rs);
					claims.merge(row.token(), row, (a, b) -> {
						List<StoredEvent> events = new ArrayList<>(a.events());
						events.addAll(b.events());
						return new Claim(a.contract(), a.session(), a.consumer(), a.cursor(), a.laneKey(), events, a.position(),
								a.target(), a.attempt(), a.failures(), a.token());
					});
				}
				return new ArrayList<>(claims.values());
			});
	}

	@Override
	public Set<UUID> finish(List<Finish> finishes, Instant now) {
		if (finishes.isEmpty()) {
			return Set.of();
		}
		// one order for every transaction that locks several sessions, so that two never wait on each other
		List<Finish> sorted = new ArrayList<>(finishes);
		sorted.sort(Comparator.comparing((Finish f) -> f.claim().contract())
			.thenComparing((f) -> f.claim().session())
			.thenComparing((f) -> f.claim().consumer())
			.thenComparingLong((f) -> f.claim().index()));
		return StoreFailures.guard(
				() -> DeadlockRetry.run(() -> this.transactions.execute((status) -> finishInTransaction(sorted, time(now)))));
	}

	private Set<UUID> finishInTransaction(List<Finish> finishes, @Nullable OffsetDateTime now) {
		Set<UUID> accepted = new HashSet<>();
		for (List<Finish> group : groups(finishes, (finish) -> session(finish.claim()))) {
			finishGroup(group, now, accepted);
		}
		for (Finish finish : finishes) {
			if (!finish.events().isEmpty() && accepted.contains(finish.claim().token())) {
				this.events.append(finish.claim().contract(), finish.claim().session(), finish.events());
			}
		}
		return accepted;
	}

	/** Locks what the finishes of {@code finishes} (one group, sorted) change, and changes it. */
	private void finishGroup(List<Finish> finishes, @Nullable OffsetDateTime now, Set<UUID> accepted) {
		List<Claim> appending = finishes.stream()
			.filter((f) -> !f.events().isEmpty())
			.map(Finish::claim)
			.toList();
		if (!appending.isEmpty()) {
			sessions(this.jdbc.sql(LOCK_SESSIONS), appending)
				.param("contracts", SqlArrays.of("text", appending.stream().map(Claim::contract).toArray()))
				.param("sessions", SqlArrays.of("text", appending.stream().map(Claim::session).toArray()))
				.query((rs) -> {
				});
		}
		lockCursors(finishes.stream().map(Finish::claim).toList());
		// cursors before units, the order in which a clear takes them
		for (boolean cursor : new boolean[] { true, false }) {
			List<Finish> completed = finishes.stream()
				.filter((f) -> f.claim().cursor() == cursor && f.isCompleted())
				.toList();
			List<Finish> failed = finishes.stream()
				.filter((f) -> f.claim().cursor() == cursor && !f.isCompleted())
				.toList();
			if (!completed.isEmpty()) {
				accepted.addAll(keys(this.jdbc.sql(cursor ? COMPLETE_CURSORS : COMPLETE_UNITS), completed)
					.query((rs, row) -> rs.getObject("claim", UUID.class))
					.list());
			}
			if (!failed.isEmpty()) {
				JdbcClient.StatementSpec statement = keys(this.jdbc.sql(cursor ? FINISH_CURSORS : FINISH_UNITS), failed);
				if (cursor) {
					statement = statement.param("failedIndexes",
							SqlArrays.of("int8", failed.stream().map(Finish::failedIndex).toArray()));
				}
				accepted.addAll(statement
					.param("errors", SqlArrays.of("text", failed.stream().map(Finish::error).toArray()))
					.param("retryAts", SqlArrays.of("timestamptz", failed.stream().map((f) -> time(f.retryAt())).toArray()))
					.param("deads", SqlArrays.of("bool", failed.stream().map(Finish::dead).toArray()))
					.param("now", now)
					.query((rs, row) -> rs.getObject("claim", UUID.class))
					.list());
			}
		}
	}

	/**
	 * The items in groups of claims whose statements run together: on Citus one group per session,
	 * in the items' order, so that each statement names one session and runs on one shard; on plain
	 * PostgreSQL all of them, in one statement each.
	 */
	private <T> Collection<List<T>> groups(Collection<T> items, Function<T, SessionRef> session) {
		if (!this.citus.distributed()) {
			return List.of(List.copyOf(items));
		}
		Map<SessionRef, List<T>> bySession = new LinkedHashMap<>();
		for (T item : items) {
			bySession.computeIfAbsent(session.apply(item), (key) -> new ArrayList<>()).add(item);
		}
		return bySession.values();
	}

	private static SessionRef session(Claim claim) {
		return new SessionRef(claim.contract(), claim.session());
	}

	/**
	 * Binds the sessions a statement may touch: its rows come from arrays, so without these PostgreSQL
	 * would still find them, but Citus could not tell which shards hold them.
	 */
	private static JdbcClient.StatementSpec sessions(JdbcClient.StatementSpec statement, Collection<Claim> claims) {
		return sessionRefs(statement, claims.stream().map(PostgresWorkStore::session).toList());
	}

	private static JdbcClient.StatementSpec sessionRefs(JdbcClient.StatementSpec statement, Collection<SessionRef> sessions) {
		return statement.param("contractSet", SqlArrays.of("text", sessions.stream().map(SessionRef::contract).distinct().toArray()))
			.param("sessionSet", SqlArrays.of("text", sessions.stream().map(SessionRef::session).distinct().toArray()));
	}

	/**
	 * An append locks cursor rows in (contract, session, consumer) order, of several sessions when
	 * group commit stores them in one statement, so a finish that changes two or more cursor rows
	 * could close a cycle with it: those are locked in that order first.
	 */
	private void lockCursors(List<Claim> claims) {
		List<Claim> cursors = claims.stream().filter(Claim::cursor).toList();
		if (cursors.size() < 2) {
			return;
		}
		sessions(this.jdbc.sql(LOCK_CURSORS), cursors)
			.param("contracts", SqlArrays.of("text", cursors.stream().map(Claim::contract).toArray()))
			.param("sessions", SqlArrays.of("text", cursors.stream().map(Claim::session).toArray()))
			.param("consumers", SqlArrays.of("text", cursors.stream().map(Claim::consumer).toArray()))
			.query((rs) -> {
			});
	}

	private static JdbcClient.StatementSpec keys(JdbcClient.StatementSpec statement, List<Finish> finishes) {
		return sessions(statement, finishes.stream().map(Finish::claim).toList()).param("contracts", SqlArrays.of("text", finishes.stream().map((f) -> f.claim().contract()).toArray()))
			.param("sessions", SqlArrays.of("text", finishes.stream().map((f) -> f.claim().session()).toArray()))
			.param("consumers", SqlArrays.of("text", finishes.stream().map((f) -> f.claim().consumer()).toArray()))
			.param("indexes", SqlArrays.of("int8", finishes.stream().map(Finish::through).toArray()))
			.param("claims", SqlArrays.of("uuid", finishes.stream().map((f) -> f.claim().token()).toArray()));
	}

	/**
	 * A claim or a renewal writes only a lease, which need not wait for the disk: were the database to
	 * crash before its commit is flushed, the lease would be lost as if it had lapsed, and the attempt
	 * holding it would be fenced when it finishes (a finish is durable, and flushes what came before
	 * it). In a transaction of the caller's, nothing is changed.
	 */
	private JdbcClient leaseOnly(TransactionStatus status) {
		if (status.isNewTransaction()) {
			this.jdbc.sql("SET LOCAL synchronous_commit = off").update();
		}
		return this.jdbc;
	}

	@Override
	public Set<UUID> renew(Collection<Claim> claims, Instant leaseUntil) {
		if (claims.isEmpty()) {
			return Set.of();
		}
		return StoreFailures.guard(() -> this.transactions.execute((status) -> {
			JdbcClient jdbc = leaseOnly(status);
			Set<UUID> held = new HashSet<>();
			for (List<Claim> group : groups(claims, PostgresWorkStore::session)) {
				held.addAll(sessions(jdbc.sql(RENEW), group).param("leaseUntil", time(leaseUntil))
					.param("contracts", SqlArrays.of("text", group.stream().map(Claim::contract).toArray()))
					.param("sessions", SqlArrays.of("text", group.stream().map(Claim::session).toArray()))
					.param("consumers", SqlArrays.of("text", group.stream().map(Claim::consumer).toArray()))
					.param("indexes", SqlArrays.of("int8", group.stream().map(Claim::index).toArray()))
					.param("claims", SqlArrays.of("uuid", group.stream().map(Claim::token).toArray()))
					.query((rs, row) -> rs.getObject("claim", UUID.class))
					.list());
			}
			return held;
		}));
	}

	@Override
	public void release(Collection<Claim> claims) {
		if (claims.isEmpty()) {
			return;
		}
		StoreFailures.guard(() -> this.transactions.execute((status) -> {
			for (List<Claim> group : groups(claims, PostgresWorkStore::session)) {
				sessions(this.jdbc.sql(RELEASE), group)
					.param("claims", SqlArrays.of("uuid", group.stream().map(Claim::token).toArray()))
					.update();
			}
			return null;
		}));
	}

	/**
	 * Holds a liveness lock on a connection of its own ({@link PostgresInstanceLiveness}); it takes one
	 * connection of the pool for as long as it is open.
	 */
	@Override
	public InstanceLiveness liveness(IntConsumer lost) {
		return new PostgresInstanceLiveness(this.dataSource, lost);
	}

	@Override
	public int lapseOrphaned() {
		return StoreFailures.guard(() -> {
			Map<SessionRef, Set<Long>> owners = new LinkedHashMap<>();
			this.jdbc.sql(LEASE_OWNERS).query((rs, row) -> owners
				.computeIfAbsent(new SessionRef(rs.getString("contract"), rs.getString("session_id")), (k) -> new HashSet<>())
				.add(rs.getLong("owner"))).list();
			if (owners.isEmpty()) {
				return 0;
			}
			Set<Long> live = new HashSet<>(this.jdbc.sql(LIVE_OWNERS).query(Long.class).list());
			Set<Long> gone = new TreeSet<>();
			List<SessionRef> orphaned = new ArrayList<>();
			owners.forEach((session, held) -> {
				if (!live.containsAll(held)) {
					orphaned.add(session);
					held.stream().filter((owner) -> !live.contains(owner)).forEach(gone::add);
				}
			});
			if (orphaned.isEmpty()) {
				return 0;
			}
			int lapsed = 0;
			for (List<SessionRef> group : groups(orphaned, Function.identity())) {
				lapsed += this.transactions.execute((status) -> sessionRefs(this.jdbc.sql(LAPSE_ORPHANED), group)
					.param("owners", SqlArrays.of("int4", gone.stream().map(Long::intValue).toArray()))
					.query(Long.class)
					.single()
					.intValue());
			}
			return lapsed;
		});
	}

	@Override
	public int expireExhausted(Instant now, int maxAttempts, String error) {
		return StoreFailures.guard(() -> {
			List<SessionRef> sessions = this.jdbc.sql(EXHAUSTED_SESSIONS)
				.param("now", time(now))
				.param("maxAttempts", maxAttempts)
				.query((rs, row) -> new SessionRef(rs.getString("contract"), rs.getString("session_id")))
				.list();
			int expired = 0;
			for (List<SessionRef> group : (sessions.isEmpty() ? List.<List<SessionRef>>of() : groups(sessions, Function.identity()))) {
				expired += this.transactions.execute((status) -> sessionRefs(this.jdbc.sql(EXPIRE_EXHAUSTED), group)
					.param("now", time(now))
					.param("maxAttempts", maxAttempts)
					.param("error", error)
					.query(Long.class)
					.single()
					.intValue());
			}
			return expired;
		});
	}

	@Override
	public List<SessionRef> sessionsWithDueWork(Instant now, Collection<ConsumerRef> consumers, int limit) {
		return StoreFailures.guard(() -> this.jdbc.sql(DUE_SESSIONS)
			.param("contracts", SqlArrays.of("text", consumers.stream().map(ConsumerRef::contract).toArray()))
			.param("consumers", SqlArrays.of("text", consumers.stream().map(ConsumerRef::consumer).toArray()))
			.param("now", time(now))
			.param("maxAttempts", this.maxAttempts)
			.param("limit", limit)
			.query((rs, row) -> new SessionRef(rs.getString("contract"), rs.getString("session_id")))
			.list());
	}

	@Override
	public String backfill(String contract, String consumer, @Nullable Set<String> types, String after, int limit) {
		return StoreFailures.guard(() -> this.transactions.execute((status) -> {
			Window window = this.jdbc.sql(BACKFILL_WINDOW)
				.param("contract", contract)
				.param("after", after)
				.param("limit", limit)
				.query((rs, row) -> new Window(rs.getInt("scanned"), rs.getString("reached")))
				.single();
			if (window.scanned() > 0) {
				this.jdbc.sql(BACKFILL)
					.param("contract", contract)
					.param("consumer", consumer)
					.param("types", (types != null) ? SqlArrays.literal(new TreeSet<>(types)) : null, java.sql.Types.VARCHAR)
					.param("after", after)
					.param("reached", window.reached())
					.update();
			}
			// fewer than asked for: that was the last of the contract's sessions
			return (window.scanned() < limit) ? "" : Objects.requireNonNull(window.reached());
		}));
	}

	private record Window(int scanned, @Nullable String reached) {
	}

	@Override
	public void backfill(String contract, String session, String consumer, @Nullable Set<String> types) {
		StoreFailures.guard(() -> this.jdbc.sql(BACKFILL_SESSION)
			.param("contract", contract)
			.param("session", session)
			.param("consumer", consumer)
			.param("types", (types != null) ? SqlArrays.literal(new TreeSet<>(types)) : null, java.sql.Types.VARCHAR)
			.update());
	}

	@Override
	public void endBefore(String contract, String session, long markerIndex, int clearIndex) {
		StoreFailures.guard(() -> this.transactions.execute((status) -> {
			// the caller holds the session's row: cursors, then units, as a finish takes them
			this.jdbc.sql(MOVE_CURSORS_PAST).param("contract", contract).param("session", session).param("marker", markerIndex).update();
			this.jdbc.sql(END_UNITS_BEFORE).param("contract", contract).param("session", session).param("marker", markerIndex).update();
			return this.jdbc.sql(CANCEL_SCHEDULES_BEFORE)
				.param("contract", contract)
				.param("session", session)
				.param("clearIndex", clearIndex)
				.update();
		}));
	}

	@Override
	public @Nullable CursorState cursor(String contract, String session, String consumer) {
		return StoreFailures.guard(() -> this.jdbc.sql(CURSOR)
			.param("contract", contract)
			.param("session", session)
			.param("consumer", consumer)
			.query((rs, row) -> new CursorState(rs.getLong("position"), rs.getLong("target"), rs.getBoolean("dead"),
					rs.getObject("failed_idx", Long.class)))
			.optional()
			.orElse(null));
	}

	@Override
	public List<DeadLetter> deadLetters(@Nullable String contract, @Nullable String session, @Nullable String consumer,
			int limit) {
		return StoreFailures.guard(() -> this.jdbc.sql(DEAD_LETTERS)
			.param("contract", contract, java.sql.Types.VARCHAR)
			.param("session", session, java.sql.Types.VARCHAR)
			.param("consumer", consumer, java.sql.Types.VARCHAR)
			.param("limit", limit)
			.query((rs, row) -> new DeadLetter(rs.getString("contract"), rs.getString("session_id"), rs.getString("consumer"),
					rs.getString("lane"), rs.getLong("idx"), rs.getString("id"), rs.getString("type"), rs.getInt("attempt"),
					rs.getInt("failures"), rs.getString("last_error"), instant(rs, "failed_at")))
			.list());
	}

	@Override
	public void recordConsumers(Collection<ConsumerRef> consumers) {
		if (consumers.isEmpty()) {
			return;
		}
		// in a transaction of its own: a pool that hands out connections outside auto-commit keeps the rows
		StoreFailures.guard(() -> this.transactions.execute((status) -> this.jdbc.sql(RECORD_CONSUMERS)
			.param("contracts", SqlArrays.of("text", consumers.stream().map(ConsumerRef::contract).toArray()))
			.param("names", SqlArrays.of("text", consumers.stream().map(ConsumerRef::consumer).toArray()))
			.update()));
	}

	@Override
	public List<ConsumerRef> recordedConsumers(@Nullable String contract) {
		return StoreFailures.guard(() -> this.jdbc.sql(RECORDED_CONSUMERS)
			.param("contract", contract, java.sql.Types.VARCHAR)
			.query((rs, row) -> new ConsumerRef(rs.getString("contract"), rs.getString("name")))
			.list());
	}

	@Override
	public boolean redrive(String contract, String session, String consumer, long index, boolean retry) {
		return StoreFailures.guard(() -> this.transactions.execute((status) -> {
			int units = this.jdbc.sql(retry ? RETRY_UNIT : SKIP_UNIT)
				.param("contract", contract)
				.param("session", session)
				.param("consumer", consumer)
				.param("index", index)
				.update();
			if (units > 0) {
				return true;
			}
			return this.jdbc.sql(REDRIVE_CURSOR)
				.param("contract", contract)
				.param("session", session)
				.param("consumer", consumer)
				.param("index", index)
				.param("retry", retry)
				.update() > 0;
		}));
	}

	@Override
	public List<PendingWork> pending() {
		return StoreFailures.guard(() -> this.jdbc.sql(PENDING)
			.query((rs, row) -> new PendingWork(rs.getString("contract"), rs.getString("consumer"), rs.getLong("pending"),
					rs.getLong("dead"), rs.getLong("lag"), (rs.getObject("oldest") != null) ? instant(rs, "oldest") : null))
			.list());
	}

	@Override
	public List<Upcoming> upcoming(Collection<ConsumerRef> consumers, Collection<String> contracts, int limit) {
		return StoreFailures.guard(() -> this.jdbc.sql(UPCOMING)
			.param("contracts", SqlArrays.of("text", consumers.stream().map(ConsumerRef::contract).toArray()))
			.param("consumers", SqlArrays.of("text", consumers.stream().map(ConsumerRef::consumer).toArray()))
			.param("scheduleContracts", SqlArrays.of("text", contracts.toArray()))
			.param("limit", limit)
			.query((rs, row) -> new Upcoming(rs.getString("kind"), rs.getString("contract"), rs.getString("session_id"),
					rs.getString("consumer"), rs.getString("task"), rs.getLong("idx"), rs.getInt("attempt"),
					rs.getInt("failures"), nullableInstant(rs, "due_at"), nullableInstant(rs, "lease_until"),
					rs.getBoolean("dead"), rs.getBoolean("blocked"), rs.getString("last_error")))
			.list());
	}

	@Override
	public void schedule(ScheduledTask task) {
		StoreFailures.guard(() -> this.transactions.execute((status) -> this.jdbc.sql(SCHEDULE)
			.param("contract", task.contract())
			.param("session", task.session())
			.param("id", task.id())
			.param("dueAt", time(task.dueAt()))
			.param("clearIndex", task.clearIndex())
			.param("events", task.events(), java.sql.Types.VARCHAR)
			.param("ifLastIndex", task.ifLastIndex(), java.sql.Types.BIGINT)
			.update()));
	}

	@Override
	public boolean deliverDue(Instant now, Collection<String> contracts, Consumer<ScheduledTask> delivery) {
		return StoreFailures.guard(() -> {
			List<TaskKey> due = this.jdbc.sql(DUE_TASKS)
				.param("now", time(now))
				.param("contracts", SqlArrays.of("text", contracts.toArray()))
				.param("limit", DUE_TASKS_READ)
				.query((rs, row) -> new TaskKey(rs.getString("contract"), rs.getString("session_id"), rs.getString("id")))
				.list();
			for (TaskKey candidate : due) {
				boolean delivered = Boolean.TRUE.equals(this.transactions.execute((status) -> {
					this.jdbc.sql(LOCK_SESSION)
						.param("contract", candidate.contract())
						.param("session", candidate.session())
						.update();
					List<ScheduledTask> taken = this.jdbc.sql(TAKE)
						.param("contract", candidate.contract())
						.param("session", candidate.session())
						.param("id", candidate.id())
						.param("now", time(now))
						.query((rs, row) -> new ScheduledTask(rs.getString("contract"), rs.getString("session_id"),
								rs.getString("id"), instant(rs, "due_at"), rs.getInt("clear_index"), rs.getString("events"),
								rs.getObject("if_last_index", Long.class)))
						.list();
					if (taken.isEmpty()) {
						return false;
					}
					delivery.accept(taken.get(0));
					return true;
				}));
				if (delivered) {
					return true;
				}
			}
			return false;
		});
	}

	@Override
	public void postpone(ScheduledTask task, Instant at) {
		StoreFailures.guard(() -> this.transactions.execute((status) -> this.jdbc.sql(POSTPONE)
			.param("dueAt", time(at))
			.param("contract", task.contract())
			.param("session", task.session())
			.param("id", task.id())
			.update()));
	}

	private record TaskKey(String contract, String session, String id) {
	}

	private static Claim claim(String contract, String session, ResultSet rs) throws SQLException {
		StoredEvent event = null;
		rs.getLong("idx");
		if (!rs.wasNull()) {
			String causeConsumer = rs.getString("cause_consumer");
			Cause cause = (causeConsumer != null) ? new Cause(causeConsumer, rs.getString("cause_lane"),
					rs.getLong("cause_index"), rs.getInt("cause_attempt")) : null;
			event = new StoredEvent(rs.getLong("idx"), rs.getString("id"), rs.getString("type"), rs.getString("payload"),
					instant(rs, "created_at"), rs.getInt("clear_index"), cause);
		}
		return new Claim(contract, session, rs.getString("consumer"), rs.getBoolean("is_cursor"), rs.getString("lane_key"),
				(event != null) ? List.of(event) : List.of(), rs.getLong("position"), rs.getLong("target"), rs.getInt("attempt"), rs.getInt("failures"),
				rs.getObject("claim", UUID.class));
	}

	private static Instant instant(ResultSet rs, String column) throws SQLException {
		return rs.getObject(column, OffsetDateTime.class).toInstant();
	}

	private static @Nullable Instant nullableInstant(ResultSet rs, String column) throws SQLException {
		OffsetDateTime time = rs.getObject(column, OffsetDateTime.class);
		return (time != null) ? time.toInstant() : null;
	}

	private static @Nullable OffsetDateTime time(@Nullable Instant instant) {
		return (instant != null) ? OffsetDateTime.ofInstant(instant, ZoneOffset.UTC) : null;
	}

}
