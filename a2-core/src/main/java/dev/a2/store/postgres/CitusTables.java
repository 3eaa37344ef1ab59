package dev.a2.store.postgres;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Whether A2's tables are distributed by Citus in the schema a data source's connections use (the
 * migration {@code V5} distributes them on a Citus coordinator). Some statements are then sent per
 * session, or through {@code a2_append}, so that each runs on the one shard that holds the session;
 * on plain PostgreSQL the stores keep their statements that span sessions, which are cheaper there.
 * <p>
 * Asked at a store's first statement that depends on it (the migrations may run after the stores
 * are built) and kept once A2's tables exist: tables are not distributed while an application runs.
 */
final class CitusTables {

	private static final String CITUS_PRESENT = "SELECT to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL";

	/** Null while the migrations have not run: nothing is known yet. */
	private static final String EVENTS_DISTRIBUTED = """
			SELECT CASE WHEN to_regclass('a2_event') IS NOT NULL
			    THEN EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = to_regclass('a2_event')) END""";

	private final JdbcClient jdbc;

	private volatile @Nullable Boolean distributed;

	CitusTables(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	boolean distributed() {
		Boolean known = this.distributed;
		if (known == null) {
			if (!this.jdbc.sql(CITUS_PRESENT).query(Boolean.class).single()) {
				known = false;
			}
			else {
				known = this.jdbc.sql(EVENTS_DISTRIBUTED).query(Boolean.class).optional().orElse(null);
				if (known == null) {
					return false;
				}
			}
			this.distributed = known;
		}
		return known;
	}

}
