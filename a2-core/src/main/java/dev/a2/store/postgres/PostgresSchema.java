package dev.a2.store.postgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.StreamUtils;

/**
 * A2's schema, as versioned migrations shipped in this jar ({@code V<n>__<description>.sql} under
 * {@code dev/a2/store/postgres/migration}) and recorded in their own history table,
 * {@code a2_schema_history}, so that they live beside the application's own Flyway or Liquibase
 * history without touching it.
 * <p>
 * All pending migrations run in one transaction under an advisory lock: instances starting together
 * apply them once, and a failed migration leaves the schema as it was. A migration that was applied
 * and has since changed is an error, never silently skipped.
 */
public final class PostgresSchema {

	private static final Log logger = LogFactory.getLog(PostgresSchema.class);

	private static final String LOCATION = "classpath*:dev/a2/store/postgres/migration/V*__*.sql";

	private static final Pattern FILE_NAME = Pattern.compile("V(\\d+)__(.+)\\.sql");

	/** An arbitrary constant that names A2's migration lock among the application's advisory locks. */
	private static final long LOCK_KEY = 0x4132_5343_4845_4d41L;

	private static final String LOCK = "SELECT pg_advisory_xact_lock(" + LOCK_KEY + ")";

	private static final String DISTRIBUTE = "SELECT set_config('a2.distribute', ?, true)";

	private static final String CREATE_HISTORY = """
			CREATE TABLE IF NOT EXISTS a2_schema_history (
			    version     integer     PRIMARY KEY,
			    description text        NOT NULL,
			    checksum    text        NOT NULL,
			    installed_at timestamptz NOT NULL DEFAULT now()
			)""";

	private static final String APPLIED = "SELECT version, checksum FROM a2_schema_history";

	private static final String APPLIED_VERSIONS = "SELECT version FROM a2_schema_history";

	private static final String HISTORY_EXISTS = "SELECT to_regclass('a2_schema_history') IS NOT NULL";

	private static final String RECORD = """
			INSERT INTO a2_schema_history (version, description, checksum) VALUES (:version, :description, :checksum)""";

	private PostgresSchema() {
	}

	/**
	 * Applies the migrations the database lacks, in the schema the connections of {@code dataSource}
	 * use.
	 * @return the number of migrations applied
	 */
	public static int migrate(DataSource dataSource) {
		return migrate(dataSource, true);
	}

	/**
	 * Applies the migrations the database lacks, in the schema the connections of {@code dataSource}
	 * use.
	 * @param distribute on a Citus coordinator, whether the migration that creates the tables
	 * distributes them by session (it reads {@code a2.distribute}, set here for its transaction)
	 * @return the number of migrations applied
	 */
	public static int migrate(DataSource dataSource, boolean distribute) {
		List<Migration> migrations = migrations();
		JdbcClient jdbc = JdbcClient.create(dataSource);
		// migrations run as plain scripts: no parameter parsing of their text
		JdbcTemplate scripts = new JdbcTemplate(dataSource);
		Integer applied = new TransactionTemplate(new DataSourceTransactionManager(dataSource)).execute((status) -> {
			jdbc.sql(LOCK).query((rs) -> {
			});
			jdbc.sql(DISTRIBUTE).param(Boolean.toString(distribute)).query((rs) -> {
			});
			jdbc.sql(CREATE_HISTORY).update();
			Map<Integer, String> done = new TreeMap<>();
			jdbc.sql(APPLIED).query((rs) -> {
				done.put(rs.getInt("version"), rs.getString("checksum"));
			});
			int count = 0;
			for (Migration migration : migrations) {
				String checksum = done.get(migration.version());
				if (checksum == null) {
					scripts.execute(migration.sql());
					jdbc.sql(RECORD)
						.param("version", migration.version())
						.param("description", migration.description())
						.param("checksum", migration.checksum())
						.update();
					count++;
				}
				else if (!checksum.equals(migration.checksum())) {
					throw new IllegalStateException("A2 migration V" + migration.version() + " (" + migration.description()
							+ ") has changed since it was applied; restore the original file, never edit an applied migration");
				}
			}
			return count;
		});
		if (applied != null && applied > 0) {
			logger.info("Applied " + applied + " A2 schema migration(s)");
		}
		return (applied != null) ? applied : 0;
	}

	/**
	 * The migrations the database lacks, in the schema the connections of {@code dataSource} use (all
	 * of them where A2's tables were never made), each as {@code V<n> (<description>)}: for an application
	 * that applies them itself, to find at start-up that it has not.
	 */
	public static List<String> missing(DataSource dataSource) {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		boolean recorded = Boolean.TRUE.equals(jdbc.sql(HISTORY_EXISTS).query(Boolean.class).single());
		Set<Integer> applied = recorded ? new HashSet<>(jdbc.sql(APPLIED_VERSIONS).query(Integer.class).list()) : Set.of();
		return migrations().stream()
			.filter((migration) -> !applied.contains(migration.version()))
			.map((migration) -> "V" + migration.version() + " (" + migration.description() + ")")
			.toList();
	}

	static List<Migration> migrations() {
		try {
			Resource[] resources = new PathMatchingResourcePatternResolver(PostgresSchema.class.getClassLoader())
				.getResources(LOCATION);
			Map<Integer, Migration> byVersion = new TreeMap<>();
			for (Resource resource : resources) {
				Matcher name = FILE_NAME.matcher(String.valueOf(resource.getFilename()));
				if (!name.matches()) {
					continue;
				}
				String sql = StreamUtils.copyToString(resource.getInputStream(), StandardCharsets.UTF_8);
				Migration migration = new Migration(Integer.parseInt(name.group(1)), name.group(2).replace('_', ' '), sql,
						sha256(sql));
				Migration other = byVersion.putIfAbsent(migration.version(), migration);
				if (other != null && !other.checksum().equals(migration.checksum())) {
					throw new IllegalStateException("two different A2 migrations V" + migration.version()
							+ " are on the classpath; is more than one version of a2-core present?");
				}
			}
			if (byVersion.isEmpty()) {
				throw new IllegalStateException("no A2 migrations found at " + LOCATION);
			}
			return byVersion.values().stream().sorted(Comparator.comparingInt(Migration::version)).toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot read A2's migrations", ex);
		}
	}

	private static String sha256(String text) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	record Migration(int version, String description, String sql, String checksum) {
	}

}
