package dev.a2.store.postgres;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

import javax.sql.DataSource;

import dev.a2.store.StoreFailures;
import dev.a2.store.StoreTransactionTemplate;
import dev.a2.store.SnapshotStore;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The {@link SnapshotStore} on PostgreSQL: table {@code a2_state_snapshot}. Writes run in a
 * transaction: a pool that hands out connections without auto-commit rolls back what a bare
 * connection wrote when it goes back to the pool.
 */
public final class PostgresSnapshotStore implements SnapshotStore {

	private static final String LATEST = """
			SELECT idx, state::text AS state FROM a2_state_snapshot
			WHERE contract = :contract AND session_id = :session AND reducer = :reducer
			  AND idx > :after AND idx <= :through
			ORDER BY idx DESC
			LIMIT 1""";

	/**
	 * A {@code VALUES} list ({@code %s}) rather than {@code unnest}: on
	 * Citus it then runs on the session's shard in one step.
	 */
	private static final String SAVE = """
			INSERT INTO a2_state_snapshot (contract, session_id, reducer, idx, state)
			VALUES %s
			ON CONFLICT (contract, session_id, reducer, idx) DO NOTHING""";

	private static final String DELETE_THROUGH = """
			DELETE FROM a2_state_snapshot
			WHERE contract = :contract AND session_id = :session AND idx <= :index""";

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	public PostgresSnapshotStore(DataSource dataSource) {
		this(dataSource, new DataSourceTransactionManager(dataSource));
	}

	/** @param transactionManager the application's, over {@code dataSource}, so that a write joins its transactions */
	public PostgresSnapshotStore(DataSource dataSource, PlatformTransactionManager transactionManager) {
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = new StoreTransactionTemplate(transactionManager);
	}

	@Override
	public @Nullable Snapshot latest(String contract, String session, String reducer, long after, long through) {
		return StoreFailures.guard(() -> this.jdbc.sql(LATEST)
			.param("contract", contract)
			.param("session", session)
			.param("reducer", reducer)
			.param("after", after)
			.param("through", through)
			.query((rs, row) -> new Snapshot(rs.getLong("idx"), rs.getString("state")))
			.optional()
			.orElse(null));
	}

	@Override
	public void save(String contract, String session, String reducer, List<Snapshot> snapshots) {
		if (snapshots.isEmpty()) {
			return;
		}
		StoreFailures.guard(() -> this.transactions.execute((status) -> this.jdbc.sql(SAVE.formatted(rows(snapshots.size())))
			.param("contract", contract)
			.param("session", session)
			.param("reducer", reducer)
			.params(snapshotParams(snapshots))
			.update()));
	}

	private static String rows(int count) {
		StringJoiner rows = new StringJoiner(", ");
		for (int i = 0; i < count; i++) {
			rows.add("(:contract, :session, :reducer, :index" + i + ", CAST(:state" + i + " AS json))");
		}
		return rows.toString();
	}

	private static Map<String, Object> snapshotParams(List<Snapshot> snapshots) {
		Map<String, Object> params = new HashMap<>();
		for (int i = 0; i < snapshots.size(); i++) {
			params.put("index" + i, snapshots.get(i).index());
			params.put("state" + i, snapshots.get(i).state());
		}
		return params;
	}

	@Override
	public void deleteThrough(String contract, String session, long index) {
		StoreFailures.guard(() -> this.transactions.execute((status) -> this.jdbc.sql(DELETE_THROUGH)
			.param("contract", contract)
			.param("session", session)
			.param("index", index)
			.update()));
	}

}
