package dev.a2.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The one PostgreSQL every process of a run shares: an embedded server on a data directory and a
 * port of its own, so that it can be stopped and started again with everything it committed.
 */
final class ChaosDatabase implements AutoCloseable {

	private final Path data;

	private final int port;

	private EmbeddedPostgres postgres;

	private int restarts;

	private ChaosDatabase(Path data, int port) throws IOException {
		this.data = data;
		this.port = port;
		this.postgres = start();
	}

	/** A fresh server on an empty {@code data} directory and a free port. */
	static ChaosDatabase fresh(Path data) {
		try {
			deleteRecursively(data);
			Files.createDirectories(data);
			return new ChaosDatabase(data, freePort());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot start the embedded PostgreSQL in " + data, ex);
		}
	}

	String jdbcUrl() {
		return "jdbc:postgresql://localhost:" + this.port + "/postgres";
	}

	/** Queries on a connection of its own each time: the harness's reads survive a restart too. */
	JdbcTemplate jdbc() {
		SimpleDriverDataSource dataSource = new SimpleDriverDataSource(new org.postgresql.Driver(), jdbcUrl(), "postgres",
				"postgres");
		return new JdbcTemplate(dataSource);
	}

	/** Stops the server (a fast shutdown: every connection is cut, running transactions roll back). */
	synchronized void stop() {
		try {
			this.postgres.close();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot stop the embedded PostgreSQL", ex);
		}
	}

	/** Starts it again on the same port and data. */
	synchronized void startAgain() {
		try {
			this.postgres = start();
			this.restarts++;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot start the embedded PostgreSQL again in " + this.data, ex);
		}
	}

	synchronized int restarts() {
		return this.restarts;
	}

	@Override
	public synchronized void close() {
		stop();
	}

	private EmbeddedPostgres start() throws IOException {
		return EmbeddedPostgres.builder()
			.setDataDirectory(this.data)
			.setCleanDataDirectory(false)
			.setPort(this.port)
			// every process has a pool and a listening connection; the harness reads beside them
			.setServerConfig("max_connections", "300")
			.start();
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	static void deleteRecursively(Path path) throws IOException {
		if (!Files.exists(path)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(path)) {
			for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.delete(p);
			}
		}
	}

}
