package dev.a2.store.postgres;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;

import javax.sql.DataSource;

import dev.a2.A2Exception;
import dev.a2.Cause;
import dev.a2.ErrorCode;
import dev.a2.store.StoreFailures;
import dev.a2.store.StoreTransactionTemplate;
import dev.a2.store.EventStore;
import dev.a2.store.EventToStore;
import dev.a2.store.SessionHead;
import dev.a2.store.StoredEvent;
import dev.a2.store.StoredPage;
import dev.a2.store.WorkLease;
import dev.a2.store.WorkUnit;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.support.DataAccessUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementSetter;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The {@link EventStore} on PostgreSQL: tables {@code a2_session} and {@code a2_event}.
 * <p>
 * An append is one statement, run in auto-commit mode so that it commits as it answers (one round
 * trip, no separate {@code COMMIT}): the statement locks (or creates) the session row while
 * reserving as many indexes as the batch has events, and inserts the events. An id the session
 * already has makes the statement fail whole (a unique violation, so no index is left unused), and
 * the batch is appended again in a transaction under the lock, without the events that exist; a
 * retried push thus costs an error in PostgreSQL's log and a second try. Called inside a
 * transaction the application started, the append joins it and takes that second way at once.
 * Outside one, appends that arrive while others are being stored are stored together in the next
 * statement, for many sessions at once (group commit, see {@link GroupCommit}); on Citus only a
 * session's own appends are combined, so that each statement stays on the session's shard.
 */
public final class PostgresEventStore implements EventStore {

	private static final String EVENT_COLUMNS = """
			idx, id, type, payload::text AS payload, created_at, clear_index,
			cause_consumer, cause_lane, cause_index, cause_attempt""";

	/**
	 * Reserves the batch's indexes under the session's row lock and inserts the events, with the
	 * consumer work they create. The events travel as arrays, so one prepared statement serves every
	 * batch size. The cause arrays and the work are left out of the statement when a batch has none:
	 * pushes are the common case, and each part costs. An id the session has fails the statement.
	 * <p>
	 * It answers one row, the session's: the i-th event (from 1) took index {@code base + i}, and all
	 * took the one {@code created_at} and clear index, so there are no rows to sort and match back.
	 * The events are inserted all the same: PostgreSQL runs a modifying {@code WITH} part to the end
	 * whether or not the answer reads it.
	 */
	private static final String APPEND_TEMPLATE = """
			WITH head AS (
			    INSERT INTO a2_session AS s (contract, session_id, last_index)
			    VALUES (:contract, :session, :count)
			    ON CONFLICT (contract, session_id) DO UPDATE SET last_index = s.last_index + :count
			    WHERE s.clear_index = coalesce(CAST(:clearIndex AS int), s.clear_index)
			    RETURNING s.last_index - :count AS base, s.clear_index,
			              coalesce(CAST(:createdAt AS timestamptz), now()) AS created_at
			), ins AS (
			    INSERT INTO a2_event (contract, session_id, idx, id, type, payload, created_at, clear_index%1$s)
			    SELECT :contract, :session, head.base + e.ord, e.id, e.type, e.payload::jsonb,
			           head.created_at, head.clear_index%2$s
			    FROM head, unnest(:ids, :types, :payloads%3$s) WITH ORDINALITY AS e(id, type, payload%4$s, ord)
			    RETURNING idx, id
			)%5$s
			SELECT base, created_at, clear_index FROM head""";

	private static final String CAUSE_COLUMNS = ", cause_consumer, cause_lane, cause_index, cause_attempt";

	/**
	 * The statement above for the commonest append, one event without cause or work (a message
	 * pushed): its values bound as they are, no arrays to unnest. PostgreSQL spends about an eighth
	 * less on it (142–149 µs of CPU per append against 164–166, pgbench, 4 clients, durable commits).
	 * It answers only columns of fixed size: for an answer whose rows may be of any size the driver
	 * before 42.7.13 (the one Spring Boot 4.0 manages) sends a {@code Sync} and waits for the
	 * database's answer before the statement, a second round trip for every append.
	 */
	private static final PositionalSql APPEND_SINGLE = PositionalSql.of("""
			WITH head AS (
			    INSERT INTO a2_session AS s (contract, session_id, last_index)
			    VALUES (:contract, :session, 1)
			    ON CONFLICT (contract, session_id) DO UPDATE SET last_index = s.last_index + 1
			    WHERE s.clear_index = coalesce(CAST(:clearIndex AS int), s.clear_index)
			    RETURNING s.last_index, s.clear_index
			)
			INSERT INTO a2_event (contract, session_id, idx, id, type, payload, created_at, clear_index)
			SELECT :contract, :session, head.last_index, :id, :type, CAST(:payload AS jsonb),
			       coalesce(CAST(:createdAt AS timestamptz), now()), head.clear_index
			FROM head
			RETURNING idx, created_at, clear_index""");

	/** Its values in this order; it answers {@code idx, created_at, clear_index}, read by place. */
	private static final PositionalSql.Binding APPEND_SINGLE_BINDING = APPEND_SINGLE.binding("contract", "session",
			"clearIndex", "id", "type", "payload", "createdAt");

	private static final String WORK = """
			, work AS (
			    INSERT INTO a2_work (contract, session_id, consumer, idx, lane_key, attempt, claim, lease_until, owner)
			    SELECT :contract, :session, w.consumer, ins.idx, w.lane_key, CASE WHEN w.claim IS NULL THEN 0 ELSE 1 END,
			           w.claim, w.lease_until, w.owner
			    FROM ins JOIN unnest(:workIds, :workConsumers, :workKeys, :workClaims, :workLeases, :workOwners)
			         AS w(id, consumer, lane_key, claim, lease_until, owner) ON w.id = ins.id
			), cursors AS (
			    INSERT INTO a2_cursor AS c (contract, session_id, consumer, position, target, types)
			    SELECT :contract, :session, k.consumer, CASE WHEN k.backfill THEN 0 ELSE min(head.base) END, max(ins.idx),
			           k.types::text[]
			    FROM head, ins JOIN unnest(:cursorIds, :cursorConsumers, :cursorBackfills, :cursorTypes)
			         AS k(id, consumer, backfill, types) ON k.id = ins.id
			    GROUP BY k.consumer, k.backfill, k.types
			    ORDER BY k.consumer
			    ON CONFLICT (contract, session_id, consumer) DO UPDATE
			        SET target = greatest(c.target, excluded.target), types = excluded.types
			)""";

	private static final int CAUSES = 1;

	private static final int WORKS = 2;

	private static final PositionalSql[] APPENDS = new PositionalSql[4];

	/**
	 * The append of a group-commit round: several sessions' events in one statement. The session rows
	 * are locked (or created) in one order, the order in which a consumer's finish locks the sessions
	 * it appends to, each reserving as many indexes as the round has events for it; an event's index
	 * is its session's new last index less the number of the session's events after it in the round.
	 * An id a session has fails the whole statement, and with it the round. It answers a row per
	 * session, by the session's place in the round, of fixed-size columns only: pgjdbc before 42.7.13
	 * sends a {@code Sync} and waits for it before a statement whose answer has text, a round trip more
	 * per round (see {@link #APPEND_SINGLE}).
	 */
	private static final String APPEND_ALL_TEMPLATE = """
			WITH n AS (
			    SELECT * FROM unnest(:sessionContracts, :sessionIds, :sessionCounts) WITH ORDINALITY
			        AS n(contract, session_id, count, place)
			), head AS (
			    INSERT INTO a2_session AS s (contract, session_id, last_index)
			    SELECT n.contract, n.session_id, n.count
			    FROM n
			    ORDER BY n.contract, n.session_id
			    ON CONFLICT (contract, session_id) DO UPDATE SET last_index = s.last_index + excluded.last_index%6$s
			    RETURNING s.contract, s.session_id, s.last_index, s.clear_index,
			              coalesce(CAST(:createdAt AS timestamptz), now()) AS created_at
			), ins AS (
			    INSERT INTO a2_event (contract, session_id, idx, id, type, payload, created_at, clear_index%1$s)
			    SELECT e.contract, e.session_id, head.last_index - e.later, e.id, e.type, e.payload::jsonb,
			           head.created_at, head.clear_index%2$s
			    FROM unnest(:contracts, :sessions, :laters, :ids, :types, :payloads%3$s)
			         AS e(contract, session_id, later, id, type, payload%4$s)
			    JOIN head ON head.contract = e.contract AND head.session_id = e.session_id
			    RETURNING contract, session_id, idx, id
			)%5$s
			SELECT n.place, head.last_index, head.clear_index, head.created_at
			FROM head JOIN n ON n.contract = head.contract AND n.session_id = head.session_id""";

	/** The work of a round's events; a cursor starts after its session's events before the round's. */
	private static final String WORK_ALL = """
			, work AS (
			    INSERT INTO a2_work (contract, session_id, consumer, idx, lane_key, attempt, claim, lease_until, owner)
			    SELECT ins.contract, ins.session_id, w.consumer, ins.idx, w.lane_key, CASE WHEN w.claim IS NULL THEN 0 ELSE 1 END,
			           w.claim, w.lease_until, w.owner
			    FROM ins JOIN unnest(:workContracts, :workSessions, :workIds, :workConsumers, :workKeys, :workClaims,
			                         :workLeases, :workOwners)
			         AS w(contract, session_id, id, consumer, lane_key, claim, lease_until, owner)
			      ON w.contract = ins.contract AND w.session_id = ins.session_id AND w.id = ins.id
			), cursors AS (
			    INSERT INTO a2_cursor AS c (contract, session_id, consumer, position, target, types)
			    SELECT ins.contract, ins.session_id, k.consumer,
			           CASE WHEN k.backfill THEN 0 ELSE min(ins.idx - k.place) END, max(ins.idx), k.types::text[]
			    FROM ins JOIN unnest(:cursorContracts, :cursorSessions, :cursorIds, :cursorPositions, :cursorConsumers,
			                         :cursorBackfills, :cursorTypes)
			         AS k(contract, session_id, id, place, consumer, backfill, types)
			      ON k.contract = ins.contract AND k.session_id = ins.session_id AND k.id = ins.id
			    GROUP BY ins.contract, ins.session_id, k.consumer, k.backfill, k.types
			    ORDER BY ins.contract, ins.session_id, k.consumer
			    ON CONFLICT (contract, session_id, consumer) DO UPDATE
			        SET target = greatest(c.target, excluded.target), types = excluded.types
			)""";

	/**
	 * The check of a round whose callers expect clear indexes (consumers' runs): a session whose clear
	 * index is no longer the one expected is left as it is, and so are its events, which then join no
	 * head; it answers no row. The expectations travel by session key, as the proposed row cannot
	 * carry them. Rounds of pushes alone leave it out.
	 */
	private static final String CHECK_ALL = """

			    WHERE s.clear_index = coalesce(
			        (CAST(:sessionClearIndexes AS int[]))[array_position(CAST(:sessionKeys AS text[]), s.contract || chr(1) || s.session_id)],
			        s.clear_index)""";

	private static final int CHECKS = 4;

	private static final PositionalSql[] APPEND_ALLS = new PositionalSql[8];

	static {
		for (int variant = 0; variant < APPEND_ALLS.length; variant++) {
			boolean causes = (variant & CAUSES) != 0;
			boolean works = (variant & WORKS) != 0;
			String causeColumns = causes ? CAUSE_COLUMNS : "";
			String causeValues = causes ? CAUSE_COLUMNS.replace(", ", ", e.") : "";
			String causeParams = causes ? ", :causeConsumers, :causeLanes, :causeIndexes, :causeAttempts" : "";
			if (variant < APPENDS.length) {
				APPENDS[variant] = PositionalSql.of(APPEND_TEMPLATE.formatted(causeColumns, causeValues, causeParams,
						causeColumns, works ? WORK : ""));
			}
			APPEND_ALLS[variant] = PositionalSql.of(APPEND_ALL_TEMPLATE.formatted(causeColumns, causeValues, causeParams,
					causeColumns, works ? WORK_ALL : "", ((variant & CHECKS) != 0) ? CHECK_ALL : ""));
		}
	}

	/**
	 * How many group-commit rounds may run at once on plain PostgreSQL by default, each a statement on
	 * a connection of its own: enough to keep the database busy while one round waits for its commit
	 * to reach the disk, few enough that the appends waiting in the meantime make large rounds.
	 */
	public static final int DEFAULT_APPEND_ROUNDS = 4;

	/** The one line of group commit on plain PostgreSQL, where a round spans sessions. */
	private static final String ACROSS_SESSIONS = "";

	/**
	 * The append on Citus: the same work as the statement above, in the function {@code a2_append}
	 * (migration V5), whose call Citus delegates to the worker holding the session's shard, where it
	 * runs as one local transaction. Inside the application's transaction the coordinator runs it
	 * statement by statement, each on that one shard.
	 */
	private static final PositionalSql APPEND_FUNCTION = PositionalSql.of("""
			SELECT idx, id, created_at, clear_index
			FROM a2_append(:contract, :session, :ids, :types, :payloads, CAST(:createdAt AS timestamptz),
			               :causeConsumers, :causeLanes, :causeIndexes, :causeAttempts, :workIds, :workConsumers, :workKeys,
			               :cursorIds, :cursorConsumers, :cursorBackfills, :cursorTypes)""");

	private static final String LOCK_SESSION = """
			SELECT last_index, clear_index, cleared_at FROM a2_session
			WHERE contract = :contract AND session_id = :session
			FOR UPDATE""";

	private static final String CREATE_SESSION = """
			INSERT INTO a2_session (contract, session_id) VALUES (:contract, :session)
			ON CONFLICT (contract, session_id) DO NOTHING""";

	private static final String EVENTS_BY_ID = "SELECT " + EVENT_COLUMNS + """

			FROM a2_event
			WHERE contract = :contract AND session_id = :session AND id = ANY(:ids)""";

	private static final String HISTORY = """
			SELECT s.last_index AS head, s.cleared_at, e.*
			FROM a2_session s
			LEFT JOIN LATERAL (
			    SELECT %s
			    FROM a2_event e
			    WHERE e.contract = :contract AND e.session_id = :session
			      AND e.idx > greatest(:after, s.cleared_at)
			    ORDER BY e.idx
			    LIMIT :limit
			) e ON true
			WHERE s.contract = :contract AND s.session_id = :session
			ORDER BY e.idx""".formatted(EVENT_COLUMNS);

	private static final String RANGE = "SELECT " + EVENT_COLUMNS + """

			FROM a2_event
			WHERE contract = :contract AND session_id = :session AND idx > :after AND idx <= :through
			ORDER BY idx
			LIMIT :limit""";

	private static final String HEAD = """
			SELECT last_index, clear_index, cleared_at FROM a2_session
			WHERE contract = :contract AND session_id = :session""";

	private static final String CLEARED_AT_OR_BEFORE = """
			SELECT coalesce(max(idx), 0) FROM a2_event
			WHERE contract = :contract AND session_id = :session AND type = '%s' AND idx <= :index"""
		.formatted(CLEAR_MARKER);

	private static final String START_OVER = """
			UPDATE a2_session SET last_index = :index, clear_index = clear_index + 1, cleared_at = :index
			WHERE contract = :contract AND session_id = :session""";

	private static final String INSERT_CLEAR_MARKER = """
			INSERT INTO a2_event (contract, session_id, idx, id, type, payload, created_at, clear_index)
			VALUES (:contract, :session, :index, :id, '%s', '{}', coalesce(CAST(:createdAt AS timestamptz), now()), :clearIndex)
			RETURNING created_at""".formatted(CLEAR_MARKER);

	private static final RowMapper<SessionHead> HEAD_MAPPER = (rs, row) -> new SessionHead(rs.getLong("last_index"),
			rs.getInt("clear_index"), rs.getLong("cleared_at"));

	private static final RowMapper<StoredEvent> EVENT_MAPPER = (rs, row) -> event(rs);

	private final DataSource dataSource;

	private final JdbcClient jdbc;

	/** The append statements, sent with their values in order ({@link PositionalSql}). */
	private final JdbcTemplate template;

	private final TransactionTemplate transactions;

	private final GroupCommit groupCommit = new GroupCommit(new Rounds());

	private final @Nullable Clock clock;

	private final CitusTables citus;

	private final int appendRounds;

	public PostgresEventStore(DataSource dataSource) {
		this(dataSource, new DataSourceTransactionManager(dataSource));
	}

	/**
	 * @param transactionManager the application's transaction manager over {@code dataSource}, so that
	 * an append made inside the application's transaction joins it
	 */
	public PostgresEventStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
		this(dataSource, transactionManager, null);
	}

	/**
	 * @param clock what stamps the events' {@code createdAt} (a test's virtual clock, so that ages
	 * and lag read right in its time); {@code null} for the database's clock, one for every instance
	 */
	public PostgresEventStore(DataSource dataSource, PlatformTransactionManager transactionManager, @Nullable Clock clock) {
		this(dataSource, transactionManager, clock, DEFAULT_APPEND_ROUNDS);
	}

	/**
	 * @param appendRounds how many group-commit rounds may run at once on plain PostgreSQL (at least
	 * 1; {@link #DEFAULT_APPEND_ROUNDS} by default): each is one statement, so one backend, at a time.
	 * More keep a database with many cores busy under a heavy append load; fewer make larger rounds,
	 * which cost less CPU per event where the database shares a few cores with the application
	 */
	public PostgresEventStore(DataSource dataSource, PlatformTransactionManager transactionManager, @Nullable Clock clock,
			int appendRounds) {
		if (appendRounds < 1) {
			throw new IllegalArgumentException("appendRounds must be at least 1, was " + appendRounds);
		}
		this.appendRounds = appendRounds;
		this.dataSource = dataSource;
		this.jdbc = JdbcClient.create(dataSource);
		this.template = new JdbcTemplate(dataSource);
		this.transactions = new StoreTransactionTemplate(transactionManager);
		this.clock = clock;
		this.citus = new CitusTables(dataSource);
	}

	/** How many group-commit rounds may run at once on plain PostgreSQL. */
	public int appendRounds() {
		return this.appendRounds;
	}

	/** The {@code createdAt} of what is written now: {@code null} lets the database stamp it. */
	private @Nullable OffsetDateTime createdAt() {
		return (this.clock != null) ? OffsetDateTime.ofInstant(this.clock.instant(), ZoneOffset.UTC) : null;
	}

	/** On Citus the append is the function {@code a2_append}, which stores units unclaimed. */
	@Override
	public boolean storesLeases() {
		return !StoreFailures.guard(this.citus::distributed);
	}

	@Override
	public List<StoredEvent> append(String contract, String session, List<EventToStore> events,
			@Nullable Integer clearIndex) {
		if (events.isEmpty()) {
			throw new IllegalArgumentException("an append needs at least one event");
		}
		if (TransactionSynchronizationManager.isActualTransactionActive()) {
			return StoreFailures
				.guard(() -> this.transactions.execute((status) -> appendUnderLock(contract, session, events, clearIndex)));
		}
		// on Citus a round stays in one session, so that its statement runs on the session's shard
		boolean distributed = StoreFailures.guard(this.citus::distributed);
		if (TransactionSynchronizationManager.hasResource(this.dataSource) || (distributed && clearIndex != null)) {
			// a connection is bound without a transaction (a SUPPORTS scope): leave it be, append on it.
			// On Citus the function a2_append does not check a clear index: the lock does
			return StoreFailures.guard(() -> DeadlockRetry
				.run(() -> this.transactions.execute((status) -> appendUnderLock(contract, session, events, clearIndex))));
		}
		return distributed ? this.groupCommit.append(contract + '\u0000' + session, 1, contract, session, events, null)
				: this.groupCommit.append(ACROSS_SESSIONS, this.appendRounds, contract, session, events, clearIndex);
	}

	/** What a run's write ({@code "appends"}, {@code "clears"}) fails with once the session was cleared since its trigger. */
	private static A2Exception clearedSince(String session, int clearIndex, String write) {
		return new A2Exception(ErrorCode.ABORTED, "session '" + session + "' was cleared since the event whose run " + write
				+ " (clear index " + clearIndex + "): nothing was changed");
	}

	/** The group commit's counters, for tests. */
	GroupCommit groupCommit() {
		return this.groupCommit;
	}

	/** Where group commit's rounds go: auto-committed statements, on a connection of their own. */
	private final class Rounds implements GroupCommit.Store {

		@Override
		public List<StoredEvent> appendOne(String contract, String session, List<EventToStore> events,
				@Nullable Integer clearIndex) {
			return StoreFailures.guard(() -> DeadlockRetry.run(() -> appendAlone(contract, session, events, clearIndex)));
		}

		@Override
		public List<@Nullable List<StoredEvent>> appendAll(List<GroupCommit.SessionEvents> sessions) {
			return StoreFailures.guard(() -> DeadlockRetry.run(() -> AutoCommitted.run(PostgresEventStore.this.dataSource, () -> insertAll(sessions))));
		}

	}

	private List<StoredEvent> appendAlone(String contract, String session, List<EventToStore> events,
			@Nullable Integer clearIndex) {
		try {
			return AutoCommitted.run(this.dataSource, () -> insert(contract, session, events, clearIndex));
		}
		catch (DuplicateKeyException ex) {
			// the session has one of these ids: the failed statement changed nothing
			return this.transactions.execute((status) -> appendUnderLock(contract, session, events, clearIndex));
		}
	}

	/** The way that never leaves a gap: lock the session, leave out the ids it has, insert the rest. */
	private List<StoredEvent> appendUnderLock(String contract, String session, List<EventToStore> events,
			@Nullable Integer clearIndex) {
		SessionHead head = lockSession(contract, session);
		if (clearIndex != null && head.clearIndex() != clearIndex) {
			throw clearedSince(session, clearIndex, "appends");
		}
		String[] ids = events.stream().map(EventToStore::id).toArray(String[]::new);
		Map<String, StoredEvent> byId = new HashMap<>();
		for (StoredEvent existing : this.jdbc.sql(EVENTS_BY_ID)
			.param("contract", contract)
			.param("session", session)
			.param("ids", SqlArrays.of("text", ids))
			.query(EVENT_MAPPER)
			.list()) {
			byId.put(existing.id(), existing);
		}
		List<EventToStore> fresh = events.stream().filter((event) -> !byId.containsKey(event.id())).toList();
		if (!fresh.isEmpty()) {
			// checked under the lock already
			insert(contract, session, fresh, null).forEach((event) -> byId.put(event.id(), event));
		}
		return events.stream().map((event) -> byId.get(event.id())).toList();
	}

	private SessionHead lockSession(String contract, String session) {
		List<SessionHead> locked = this.jdbc.sql(LOCK_SESSION)
			.param("contract", contract)
			.param("session", session)
			.query(HEAD_MAPPER)
			.list();
		if (!locked.isEmpty()) {
			return locked.get(0);
		}
		this.jdbc.sql(CREATE_SESSION).param("contract", contract).param("session", session).update();
		return this.jdbc.sql(LOCK_SESSION)
			.param("contract", contract)
			.param("session", session)
			.query(HEAD_MAPPER)
			.single();
	}

	/**
	 * Runs the append statement; answers the stored events in index order.
	 * @throws A2Exception {@code ABORTED} when the session's clear index is not {@code clearIndex}
	 */
	private List<StoredEvent> insert(String contract, String session, List<EventToStore> events,
			@Nullable Integer clearIndex) {
		EventToStore first = events.get(0);
		if (events.size() == 1 && first.cause() == null && first.work().isEmpty() && !this.citus.distributed()) {
			return insertSingle(contract, session, first, clearIndex);
		}
		int count = events.size();
		String[] ids = new String[count];
		String[] types = new String[count];
		String[] payloads = new String[count];
		boolean caused = false;
		boolean working = false;
		for (int i = 0; i < count; i++) {
			EventToStore event = events.get(i);
			ids[i] = event.id();
			types[i] = event.type();
			payloads[i] = event.payload();
			caused |= event.cause() != null;
			working |= !event.work().isEmpty();
		}
		boolean function = this.citus.distributed();
		MapSqlParameterSource parameters = new MapSqlParameterSource()
			.addValue("contract", contract)
			.addValue("session", session)
			.addValue("count", count)
			.addValue("clearIndex", clearIndex, Types.INTEGER)
			.addValue("ids", SqlArrays.of("text", ids))
			.addValue("types", SqlArrays.of("text", types))
			.addValue("payloads", SqlArrays.of("text", payloads))
			.addValue("createdAt", createdAt(), Types.TIMESTAMP_WITH_TIMEZONE);
		if (caused || function) {
			bindCauses(parameters, events);
		}
		if (working || function) {
			bindWork(parameters, events);
		}
		if (function) {
			// the function answers the ids: its rows are matched to the events by them
			Map<String, EventToStore> byId = new HashMap<>(count * 2);
			events.forEach((event) -> byId.put(event.id(), event));
			List<StoredEvent> inserted = new ArrayList<>(this.template.query(APPEND_FUNCTION.sql(),
					(rs, row) -> storedFrom(rs, byId.get(rs.getString("id"))), APPEND_FUNCTION.values(parameters)));
			inserted.sort(Comparator.comparingLong(StoredEvent::index));
			return inserted;
		}
		PositionalSql statement = APPENDS[(caused ? CAUSES : 0) | (working ? WORKS : 0)];
		// one row, the session's: the batch's indexes follow its base in the batch's order; none when
		// the session's clear index was not the one expected
		List<List<StoredEvent>> answer = this.template.query(statement.sql(), (rs, row) -> {
			long base = rs.getLong("base");
			Instant createdAt = rs.getObject("created_at", OffsetDateTime.class).toInstant();
			int stamped = rs.getInt("clear_index");
			List<StoredEvent> inserted = new ArrayList<>(count);
			for (int i = 0; i < count; i++) {
				inserted.add(new Inserted(base + i + 1, createdAt, stamped).of(events.get(i)));
			}
			return inserted;
		}, statement.values(parameters));
		if (answer.isEmpty() && clearIndex != null) {
			throw clearedSince(session, clearIndex, "appends");
		}
		return DataAccessUtils.requiredSingleResult(answer);
	}

	/** Runs {@link #APPEND_SINGLE}. */
	private List<StoredEvent> insertSingle(String contract, String session, EventToStore event,
			@Nullable Integer clearIndex) {
		PreparedStatementSetter values = APPEND_SINGLE_BINDING.setter(contract, session,
				new SqlParameterValue(Types.INTEGER, clearIndex), event.id(), event.type(), event.payload(),
				new SqlParameterValue(Types.TIMESTAMP_WITH_TIMEZONE, createdAt()));
		List<StoredEvent> stored = this.template.query(APPEND_SINGLE.sql(), values,
				(rs, row) -> new Inserted(rs.getLong(1), rs.getObject(2, OffsetDateTime.class).toInstant(), rs.getInt(3))
					.of(event));
		if (stored.isEmpty() && clearIndex != null) {
			throw clearedSince(session, clearIndex, "appends");
		}
		return stored;
	}

	/**
	 * Runs a round's statement for several sessions; answers each session's stored events in the
	 * order given.
	 */
	private List<@Nullable List<StoredEvent>> insertAll(List<GroupCommit.SessionEvents> sessions) {
		int sessionCount = sessions.size();
		String[] sessionContracts = new String[sessionCount];
		String[] sessionIds = new String[sessionCount];
		Integer[] sessionCounts = new Integer[sessionCount];
		String[] sessionKeys = new String[sessionCount];
		Integer[] sessionClearIndexes = new Integer[sessionCount];
		boolean checked = false;
		List<EventToStore> events = new ArrayList<>();
		List<String> contracts = new ArrayList<>();
		List<String> sessionOf = new ArrayList<>();
		List<Integer> laters = new ArrayList<>();
		List<Integer> positions = new ArrayList<>();
		boolean caused = false;
		boolean working = false;
		for (int s = 0; s < sessionCount; s++) {
			GroupCommit.SessionEvents session = sessions.get(s);
			sessionContracts[s] = session.contract();
			sessionIds[s] = session.session();
			sessionKeys[s] = session.contract() + '\u0001' + session.session();
			sessionClearIndexes[s] = session.clearIndex();
			checked |= session.clearIndex() != null;
			int count = session.events().size();
			sessionCounts[s] = count;
			for (int i = 0; i < count; i++) {
				EventToStore event = session.events().get(i);
				events.add(event);
				contracts.add(session.contract());
				sessionOf.add(session.session());
				laters.add(count - 1 - i);
				positions.add(i + 1);
				caused |= event.cause() != null;
				working |= !event.work().isEmpty();
			}
		}
		MapSqlParameterSource parameters = new MapSqlParameterSource()
			.addValue("sessionContracts", SqlArrays.of("text", sessionContracts))
			.addValue("sessionIds", SqlArrays.of("text", sessionIds))
			.addValue("sessionCounts", SqlArrays.of("int4", sessionCounts))
			.addValue("contracts", SqlArrays.of("text", contracts.toArray()))
			.addValue("sessions", SqlArrays.of("text", sessionOf.toArray()))
			.addValue("laters", SqlArrays.of("int4", laters.toArray()))
			.addValue("ids", SqlArrays.of("text", events.stream().map(EventToStore::id).toArray()))
			.addValue("types", SqlArrays.of("text", events.stream().map(EventToStore::type).toArray()))
			.addValue("payloads", SqlArrays.of("text", events.stream().map(EventToStore::payload).toArray()))
			.addValue("createdAt", createdAt(), Types.TIMESTAMP_WITH_TIMEZONE);
		if (caused) {
			bindCauses(parameters, events);
		}
		if (working) {
			bindWorkAll(parameters, events, contracts, sessionOf, positions);
		}
		if (checked) {
			parameters.addValue("sessionKeys", SqlArrays.of("text", sessionKeys))
				.addValue("sessionClearIndexes", SqlArrays.of("int4", sessionClearIndexes));
		}
		PositionalSql statement = APPEND_ALLS[(caused ? CAUSES : 0) | (working ? WORKS : 0) | (checked ? CHECKS : 0)];
		// a session's events took the indexes up to its new last index, in the order given
		List<@Nullable List<StoredEvent>> answers = new ArrayList<>(Collections.nCopies(sessionCount, null));
		this.template.query(statement.sql(), (ResultSet rs) -> {
			int s = rs.getInt("place") - 1;
			long last = rs.getLong("last_index");
			Instant createdAt = rs.getObject("created_at", OffsetDateTime.class).toInstant();
			int clearIndex = rs.getInt("clear_index");
			List<EventToStore> given = sessions.get(s).events();
			List<StoredEvent> stored = new ArrayList<>(given.size());
			for (int i = 0; i < given.size(); i++) {
				stored.add(new Inserted(last - (given.size() - 1 - i), createdAt, clearIndex).of(given.get(i)));
			}
			answers.set(s, stored);
		}, statement.values(parameters));
		for (int s = 0; s < sessionCount; s++) {
			if (answers.get(s) == null && sessions.get(s).clearIndex() == null) {
				throw new IllegalStateException("the round's statement did not answer session '" + sessionIds[s] + "'");
			}
		}
		// a session left out answers null: it was cleared since its callers' runs began
		return answers;
	}

	private static void bindCauses(MapSqlParameterSource parameters, List<EventToStore> events) {
		int count = events.size();
		String[] consumers = new String[count];
		String[] lanes = new String[count];
		Long[] indexes = new Long[count];
		Integer[] attempts = new Integer[count];
		for (int i = 0; i < count; i++) {
			Cause cause = events.get(i).cause();
			if (cause != null) {
				consumers[i] = cause.consumer();
				lanes[i] = cause.lane();
				indexes[i] = cause.index();
				attempts[i] = cause.attempt();
			}
		}
		parameters.addValue("causeConsumers", SqlArrays.of("text", consumers))
			.addValue("causeLanes", SqlArrays.of("text", lanes))
			.addValue("causeIndexes", SqlArrays.of("int8", indexes))
			.addValue("causeAttempts", SqlArrays.of("int4", attempts));
	}

	private static void bindWork(MapSqlParameterSource parameters, List<EventToStore> events) {
		WorkRows rows = new WorkRows();
		for (EventToStore event : events) {
			rows.add(event, null, null, 0);
		}
		rows.bind(parameters, false);
	}

	/** The work of a round's events, each row naming its event's session and place in the round. */
	private static void bindWorkAll(MapSqlParameterSource parameters, List<EventToStore> events, List<String> contracts,
			List<String> sessions, List<Integer> positions) {
		WorkRows rows = new WorkRows();
		for (int i = 0; i < events.size(); i++) {
			rows.add(events.get(i), contracts.get(i), sessions.get(i), positions.get(i));
		}
		rows.bind(parameters, true);
	}

	/** The unit and cursor rows of a batch's events, as the arrays the append statements unnest. */
	private static final class WorkRows {

		private final List<@Nullable String> unitContracts = new ArrayList<>();

		private final List<@Nullable String> unitSessions = new ArrayList<>();

		private final List<String> unitIds = new ArrayList<>();

		private final List<String> unitConsumers = new ArrayList<>();

		private final List<@Nullable String> unitKeys = new ArrayList<>();

		private final List<@Nullable Object> unitClaims = new ArrayList<>();

		private final List<@Nullable String> unitLeases = new ArrayList<>();

		private final List<@Nullable Integer> unitOwners = new ArrayList<>();

		private final List<@Nullable String> cursorContracts = new ArrayList<>();

		private final List<@Nullable String> cursorSessions = new ArrayList<>();

		private final List<String> cursorIds = new ArrayList<>();

		private final List<Integer> cursorPositions = new ArrayList<>();

		private final List<String> cursorConsumers = new ArrayList<>();

		private final List<Boolean> cursorBackfills = new ArrayList<>();

		private final List<@Nullable String> cursorTypes = new ArrayList<>();

		void add(EventToStore event, @Nullable String contract, @Nullable String session, int position) {
			for (WorkUnit unit : event.work()) {
				if (unit.cursor()) {
					this.cursorContracts.add(contract);
					this.cursorSessions.add(session);
					this.cursorIds.add(event.id());
					this.cursorPositions.add(position);
					this.cursorConsumers.add(unit.consumer());
					this.cursorBackfills.add(unit.backfill());
					this.cursorTypes.add((unit.types() == null) ? null : SqlArrays.literal(new TreeSet<>(unit.types())));
				}
				else {
					WorkLease lease = unit.lease();
					this.unitContracts.add(contract);
					this.unitSessions.add(session);
					this.unitIds.add(event.id());
					this.unitConsumers.add(unit.consumer());
					this.unitKeys.add(unit.laneKey());
					this.unitClaims.add((lease != null) ? lease.token() : null);
					this.unitLeases.add((lease != null) ? lease.until().toString() : null);
					this.unitOwners.add((lease != null) ? lease.owner() : null);
				}
			}
		}

		/** @param sessions whether each row names its session and place (a round of several sessions) */
		void bind(MapSqlParameterSource parameters, boolean sessions) {
			if (sessions) {
				parameters.addValue("workContracts", SqlArrays.of("text", this.unitContracts.toArray()))
					.addValue("workSessions", SqlArrays.of("text", this.unitSessions.toArray()))
					.addValue("cursorContracts", SqlArrays.of("text", this.cursorContracts.toArray()))
					.addValue("cursorSessions", SqlArrays.of("text", this.cursorSessions.toArray()))
					.addValue("cursorPositions", SqlArrays.of("int4", this.cursorPositions.toArray()));
			}
			parameters.addValue("workIds", SqlArrays.of("text", this.unitIds.toArray()))
				.addValue("workConsumers", SqlArrays.of("text", this.unitConsumers.toArray()))
				.addValue("workKeys", SqlArrays.of("text", this.unitKeys.toArray()))
				.addValue("workClaims", SqlArrays.of("uuid", this.unitClaims.toArray()))
				.addValue("workLeases", SqlArrays.of("timestamptz", this.unitLeases.toArray()))
				.addValue("workOwners", SqlArrays.of("int4", this.unitOwners.toArray()))
				.addValue("cursorIds", SqlArrays.of("text", this.cursorIds.toArray()))
				.addValue("cursorConsumers", SqlArrays.of("text", this.cursorConsumers.toArray()))
				.addValue("cursorBackfills", SqlArrays.of("bool", this.cursorBackfills.toArray()))
				.addValue("cursorTypes", SqlArrays.of("text", this.cursorTypes.toArray()));
		}

	}

	@Override
	public StoredPage history(String contract, String session, long after, int limit) {
		return StoreFailures.guard(() -> {
			long[] head = { 0, 0 };
			List<StoredEvent> events = new ArrayList<>();
			this.jdbc.sql(HISTORY)
				.param("contract", contract)
				.param("session", session)
				.param("after", after)
				.param("limit", limit)
				.query((ResultSet rs) -> {
					head[0] = rs.getLong("head");
					head[1] = rs.getLong("cleared_at");
					rs.getLong("idx");
					if (!rs.wasNull()) {
						events.add(event(rs));
					}
				});
			return new StoredPage(List.copyOf(events), head[0], head[1]);
		});
	}

	@Override
	public List<StoredEvent> range(String contract, String session, long after, long through, int limit) {
		return StoreFailures.guard(() -> this.jdbc.sql(RANGE)
			.param("contract", contract)
			.param("session", session)
			.param("after", after)
			.param("through", through)
			.param("limit", limit)
			.query(EVENT_MAPPER)
			.list());
	}

	@Override
	public SessionHead head(String contract, String session) {
		return StoreFailures.guard(() -> this.jdbc.sql(HEAD)
			.param("contract", contract)
			.param("session", session)
			.query(HEAD_MAPPER)
			.optional()
			.orElse(SessionHead.EMPTY));
	}

	@Override
	public long clearedAtOrBefore(String contract, String session, long index) {
		return StoreFailures.guard(() -> this.jdbc.sql(CLEARED_AT_OR_BEFORE)
			.param("contract", contract)
			.param("session", session)
			.param("index", index)
			.query(Long.class)
			.single());
	}

	@Override
	public StoredEvent clear(String contract, String session, @Nullable Long ifLastIndex, @Nullable Integer clearIndex) {
		return StoreFailures.guard(() -> this.transactions.execute((status) -> {
			SessionHead head = lockSession(contract, session);
			if (clearIndex != null && head.clearIndex() != clearIndex) {
				throw clearedSince(session, clearIndex, "clears");
			}
			if (ifLastIndex != null && head.lastIndex() != ifLastIndex) {
				throw new A2Exception(ErrorCode.CONFLICT, "session '" + session + "' was not cleared: its last index is "
						+ head.lastIndex() + ", not " + ifLastIndex + "; read it again and retry with the current index");
			}
			long index = head.lastIndex() + 1;
			String id = UUID.randomUUID().toString();
			this.jdbc.sql(START_OVER).param("contract", contract).param("session", session).param("index", index).update();
			OffsetDateTime createdAt = this.jdbc.sql(INSERT_CLEAR_MARKER)
				.param("contract", contract)
				.param("session", session)
				.param("index", index)
				.param("id", id)
				.param("clearIndex", head.clearIndex())
				.param("createdAt", createdAt(), Types.TIMESTAMP_WITH_TIMEZONE)
				.query(OffsetDateTime.class)
				.single();
			return new StoredEvent(index, id, CLEAR_MARKER, "{}", createdAt.toInstant(), head.clearIndex(), null);
		}));
	}

	/** An event the append statement stored: its index and stamps from the row, the rest as it was sent. */
	private static StoredEvent storedFrom(ResultSet rs, EventToStore source) throws SQLException {
		return Inserted.from(rs).of(source);
	}

	/** What an append statement answers of a row it inserted; the rest is the event it was given. */
	private record Inserted(long index, Instant createdAt, int clearIndex) {

		static Inserted from(ResultSet rs) throws SQLException {
			return new Inserted(rs.getLong("idx"), rs.getObject("created_at", OffsetDateTime.class).toInstant(),
					rs.getInt("clear_index"));
		}

		StoredEvent of(EventToStore source) {
			return new StoredEvent(this.index, source.id(), source.type(), source.payload(), this.createdAt,
					this.clearIndex, source.cause());
		}

	}

	private static StoredEvent event(ResultSet rs) throws SQLException {
		String consumer = rs.getString("cause_consumer");
		Cause cause = (consumer != null)
				? new Cause(consumer, rs.getString("cause_lane"), rs.getLong("cause_index"), rs.getInt("cause_attempt"))
				: null;
		return new StoredEvent(rs.getLong("idx"), rs.getString("id"), rs.getString("type"), rs.getString("payload"),
				rs.getObject("created_at", OffsetDateTime.class).toInstant(), rs.getInt("clear_index"), cause);
	}

}
