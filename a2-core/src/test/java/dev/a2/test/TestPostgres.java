package dev.a2.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * The one way tests get a real PostgreSQL, started once per JVM: {@code A2_TEST_JDBC_URL} when set
 * (with {@code A2_TEST_JDBC_USER} and {@code A2_TEST_JDBC_PASSWORD}), else {@code A2_TEST_CITUS_URL}
 * (a Citus coordinator); else a Testcontainers
 * PostgreSQL when Docker runs; else the embedded PostgreSQL binary from Maven Central. Each caller
 * gets a schema of its own, so test classes never see each other's rows.
 */
public final class TestPostgres {

	private static final AtomicInteger schemas = new AtomicInteger();

	private static final String RUN = Long.toString(System.nanoTime() & 0xffffffL, 36);

	private static Server server;

	private TestPostgres() {
	}

	/** Where the server is: its JDBC URL (without a schema), user and password. */
	public record Server(String jdbcUrl, String username, String password) {

		/** The URL of a connection whose search path is {@code schema}. */
		public String jdbcUrl(String schema) {
			return this.jdbcUrl + (this.jdbcUrl.contains("?") ? "&" : "?") + "currentSchema=" + schema;
		}

	}

	public static synchronized Server server() {
		if (server == null) {
			server = start();
		}
		return server;
	}

	/**
	 * The datasource properties of an application on a fresh schema, given to {@code add} (in a Spring
	 * test: {@code TestPostgres.properties("owner", registry::add)} in a {@code @DynamicPropertySource}).
	 */
	public static void properties(String owner, BiConsumer<String, Supplier<Object>> add) {
		Server server = server();
		String url = server.jdbcUrl(newSchema(owner));
		add.accept("spring.datasource.url", () -> url);
		add.accept("spring.datasource.username", server::username);
		add.accept("spring.datasource.password", server::password);
	}

	/** Creates a fresh schema named after {@code owner}, and answers its name. */
	public static String newSchema(String owner) {
		// a server that outlives the JVM (A2_TEST_JDBC_URL, a Citus cluster) keeps earlier runs' schemas
		String schema = ("t_" + owner.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_") + "_" + RUN + "_"
				+ schemas.incrementAndGet());
		if (schema.length() > 60) {
			schema = schema.substring(0, 40) + "_" + RUN + "_" + schemas.get();
		}
		try (HikariDataSource admin = dataSource(server().jdbcUrl(), 1);
				Connection connection = admin.getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE SCHEMA " + schema);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("cannot create test schema " + schema, ex);
		}
		return schema;
	}

	/** A pooled data source on a fresh schema; close it when done. */
	public static HikariDataSource newSchemaDataSource(String owner, int poolSize) {
		return dataSource(server().jdbcUrl(newSchema(owner)), poolSize);
	}

	static HikariDataSource dataSource(String jdbcUrl, int poolSize) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(jdbcUrl);
		config.setUsername(server().username());
		config.setPassword(server().password());
		config.setMaximumPoolSize(poolSize);
		config.setConnectionTimeout(5_000);
		return new HikariDataSource(config);
	}

	private static Server start() {
		String url = System.getenv("A2_TEST_JDBC_URL");
		if (url == null || url.isBlank()) {
			// a Citus coordinator: every test then runs on A2's tables distributed by session
			url = System.getenv("A2_TEST_CITUS_URL");
		}
		if (url != null && !url.isBlank()) {
			return new Server(url, envOr("A2_TEST_JDBC_USER", "postgres"), envOr("A2_TEST_JDBC_PASSWORD", "postgres"));
		}
		if (ContainerPostgres.dockerAvailable()) {
			return ContainerPostgres.start();
		}
		try {
			EmbeddedPostgres postgres = EmbeddedPostgres.builder().setServerConfig("max_connections", "300").start();
			Runtime.getRuntime().addShutdownHook(new Thread(() -> {
				try {
					postgres.close();
				}
				catch (IOException ex) {
					// the JVM is going away; the embedded server's directory is temporary anyway
				}
			}));
			return new Server(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "postgres");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot start the embedded PostgreSQL", ex);
		}
	}

	private static String envOr(String name, String fallback) {
		String value = System.getenv(name);
		return (value != null) ? value : fallback;
	}

}
