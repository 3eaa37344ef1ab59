package dev.a2.store.postgres;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeSet;

import javax.sql.DataSource;

import dev.a2.store.PresenceStore;
import dev.a2.store.StoreFailures;
import dev.a2.store.StoreTransactionTemplate;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The {@link PresenceStore} on PostgreSQL: table {@code a2_presence}. Last-writer-wins is decided by
 * the upsert itself, so instances writing at once cannot undo each other's newer values.
 */
public final class PostgresPresenceStore implements PresenceStore {

	private static final String READ = """
			SELECT participant, field, value::text AS value, at FROM a2_presence
			WHERE contract = :contract AND session_id = :session AND expires_at > :now AND value IS NOT NULL
			ORDER BY participant, field""";

	/**
	 * The writes of one participant take turns, a lock for the transaction on (contract and session,
	 * participant): row locks alone deadlocked two writes of one participant at once (a page's cursor,
	 * several PUTs in flight), as an {@code UPDATE} locks rows in the order its scan meets them, which
	 * moves as updates move them, and rows another write inserts appear between statements. The
	 * one-key form, a 64-bit hash: the two-key locks held for an instance's life (liveness, listening)
	 * are another key space, so a write never waits on them.
	 */
	private static final String TAKE_TURNS = """
			SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtextextended('a2.presence/' || :contract || '/' || :session
			    || '/' || :participant, 0))) AS turn""";

	/** Then it refreshes its participant. */
	private static final String REFRESH = """
			UPDATE a2_presence SET expires_at = :expiresAt
			WHERE contract = :contract AND session_id = :session AND participant = :participant
			  AND expires_at > :now AND expires_at < :expiresAt""";

	/**
	 * The write, a row per field: a {@code VALUES} list rather than {@code unnest}, so that on Citus
	 * it runs on the session's shard in one step, where rows selected from a function are gathered
	 * on the coordinator first. {@code %s} stands for the rows. An expired value counts as absent; an
	 * expired tombstone does not, or a write from before the removal, arriving late, would bring the
	 * field back.
	 */
	private static final String WRITE = """
			INSERT INTO a2_presence AS p (contract, session_id, participant, field, value, at, expires_at)
			VALUES %s
			ON CONFLICT (contract, session_id, participant, field) DO UPDATE
			    SET value = excluded.value, at = excluded.at, expires_at = excluded.expires_at
			    WHERE excluded.at >= p.at OR (p.expires_at <= :now AND p.value IS NOT NULL)
			RETURNING :participant AS participant, field, value::text AS value, at""";

	private static final String DELETE_EXPIRED = "DELETE FROM a2_presence WHERE expires_at <= :before";

	private static final RowMapper<PresenceRow> ROW = (rs, row) -> row(rs);

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	public PostgresPresenceStore(DataSource dataSource) {
		this(dataSource, new DataSourceTransactionManager(dataSource));
	}

	/** @param transactionManager the application's, over {@code dataSource}, so that a write joins its transactions */
	public PostgresPresenceStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = new StoreTransactionTemplate(transactionManager);
	}

	@Override
	public List<PresenceRow> read(String contract, String session, Instant now) {
		return StoreFailures.guard(() -> this.jdbc.sql(READ)
			.param("contract", contract)
			.param("session", session)
			.param("now", Timestamp.from(now))
			.query(ROW)
			.list());
	}

	@Override
	public List<PresenceRow> write(String contract, String session, String participant,
			Map<String, @Nullable String> values, Instant at, Instant expiresAt, Instant now) {
		// in name order: the rows are written, and answered, in the order of their fields
		String[] fields = new TreeSet<>(values.keySet()).toArray(String[]::new);
		String[] json = new String[fields.length];
		for (int i = 0; i < fields.length; i++) {
			json[i] = values.get(fields[i]);
		}
		return StoreFailures.guard(() -> this.transactions.execute((status) -> {
			this.jdbc.sql(TAKE_TURNS)
				.param("contract", contract)
				.param("session", session)
				.param("participant", participant)
				.query(Integer.class)
				.single();
			this.jdbc.sql(REFRESH)
				.param("contract", contract)
				.param("session", session)
				.param("participant", participant)
				.param("expiresAt", Timestamp.from(expiresAt))
				.param("now", Timestamp.from(now))
				.update();
			List<PresenceRow> written = new ArrayList<>(this.jdbc.sql(WRITE.formatted(rows(fields.length)))
				.param("contract", contract)
				.param("session", session)
				.param("participant", participant)
				.params(fieldParams(fields, json))
				.param("at", Timestamp.from(at))
				.param("expiresAt", Timestamp.from(expiresAt))
				// a tombstone blocks older writes, however late, until it is deleted: it outlives a value by a TTL
				.param("tombstoneExpiresAt", Timestamp.from(expiresAt.plus(Duration.between(now, expiresAt))))
				.param("now", Timestamp.from(now))
				.query(ROW)
				.list());
			written.sort(Comparator.comparing(PresenceRow::field));
			return written;
		}));
	}

	@Override
	public int deleteExpired(Instant before) {
		// in a transaction, as every write: a pool without auto-commit rolls back a bare connection's delete
		return StoreFailures.guard(() -> this.transactions.execute((status) -> this.jdbc.sql(DELETE_EXPIRED)
			.param("before", Timestamp.from(before))
			.update()));
	}

	private static String rows(int count) {
		StringJoiner rows = new StringJoiner(", ");
		for (int i = 0; i < count; i++) {
			rows.add("(:contract, :session, :participant, :field" + i + ", CAST(:value" + i + " AS jsonb), :at, CASE WHEN CAST(:value" + i
					+ " AS jsonb) IS NULL THEN CAST(:tombstoneExpiresAt AS timestamptz) ELSE CAST(:expiresAt AS timestamptz) END)");
		}
		return rows.toString();
	}

	private static Map<String, @Nullable Object> fieldParams(String[] fields, @Nullable String[] json) {
		Map<String, @Nullable Object> params = new HashMap<>();
		for (int i = 0; i < fields.length; i++) {
			params.put("field" + i, fields[i]);
			params.put("value" + i, json[i]);
		}
		return params;
	}

	private static PresenceRow row(ResultSet rs) throws SQLException {
		return new PresenceRow(rs.getString("participant"), rs.getString("field"), rs.getString("value"),
				rs.getObject("at", OffsetDateTime.class).toInstant());
	}

}
