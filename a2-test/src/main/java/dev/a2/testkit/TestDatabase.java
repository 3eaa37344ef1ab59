package dev.a2.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jspecify.annotations.Nullable;

/**
 * The PostgreSQL of the tests, started once per JVM: {@code A2_TEST_JDBC_URL} when set (with
 * {@code A2_TEST_JDBC_USER} and {@code A2_TEST_JDBC_PASSWORD}); else a Testcontainers PostgreSQL when
 * Testcontainers is on the class path and Docker runs; else the embedded PostgreSQL binary from Maven
 * Central. Each caller gets a schema of its own, so test classes never see each other's rows.
 */
public final class TestDatabase {

	private static final AtomicInteger schemas = new AtomicInteger();

	/**
	 * This JVM's mark in its schemas' names: a server that outlives the JVM ({@code A2_TEST_JDBC_URL})
	 * keeps the schemas of earlier test runs, whose counters started at 1 as well.
	 */
	private static final String RUN = String.format(Locale.ROOT, "%08x", new SecureRandom().nextInt());

	private static @Nullable Server server;

	private TestDatabase() {
	}

	/** Where the server is: its JDBC URL (without a schema), user and password. */
	public record Server(String jdbcUrl, String username, String password) {

		/** The URL of a connection whose search path is {@code schema}. */
		public String jdbcUrl(String schema) {
			return this.jdbcUrl + (this.jdbcUrl.contains("?") ? "&" : "?") + "currentSchema=" + schema;
		}

	}

	/** The server, started on first use. */
	public static synchronized Server server() {
		if (server == null) {
			server = start();
		}
		return server;
	}

	/** Creates a fresh schema named after {@code owner}, and answers its name. */
	public static String newSchema(String owner) {
		String number = RUN + "_" + schemas.incrementAndGet();
		String name = owner.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
		// PostgreSQL keeps the first 63 bytes of a name: the owner gives way, never the number
		String schema = "a2t_" + name.substring(0, Math.min(name.length(), 40)) + "_" + number;
		try (HikariDataSource admin = dataSource(server().jdbcUrl(), 1);
				Connection connection = admin.getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE SCHEMA " + schema);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("cannot create the test schema " + schema + ": " + ex.getMessage(), ex);
		}
		return schema;
	}

	/** A pooled data source on a fresh schema named after {@code owner}; close it when done. */
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
		config.setPoolName("a2-test");
		return new HikariDataSource(config);
	}

	private static Server start() {
		String url = System.getenv("A2_TEST_JDBC_URL");
		if (url != null && !url.isBlank()) {
			return new Server(url, envOr("A2_TEST_JDBC_USER", "postgres"), envOr("A2_TEST_JDBC_PASSWORD", "postgres"));
		}
		if (isPresent("org.testcontainers.postgresql.PostgreSQLContainer") && ContainerDatabase.dockerAvailable()) {
			return ContainerDatabase.start();
		}
		try {
			// stopped once the JVM has gone, after the test applications it closes as it exits
			EmbeddedPostgres postgres = EmbeddedPostgres.builder()
				.setServerConfig("max_connections", "300")
				.setRegisterShutdownHook(false)
				.start();
			Server embedded = new Server(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "postgres");
			EmbeddedServerReaper.watch(postgres, dataDirectory(embedded));
			return embedded;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot start the embedded PostgreSQL; set A2_TEST_JDBC_URL to use another", ex);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("the embedded PostgreSQL started but does not answer: " + ex.getMessage(), ex);
		}
	}

	private static Path dataDirectory(Server server) throws SQLException {
		try (Connection connection = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
				Statement statement = connection.createStatement();
				ResultSet directory = statement.executeQuery("SHOW data_directory")) {
			directory.next();
			return Path.of(directory.getString(1));
		}
	}

	private static boolean isPresent(String className) {
		try {
			Class.forName(className, false, TestDatabase.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

	private static String envOr(String name, String fallback) {
		String value = System.getenv(name);
		return (value != null) ? value : fallback;
	}

}
