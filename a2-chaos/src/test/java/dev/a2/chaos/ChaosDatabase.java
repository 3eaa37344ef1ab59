package dev.a2.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.LoggerFactory;

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

	/**
	 * Crashes the server: an immediate stop, as when PostgreSQL's processes die. No checkpoint is
	 * written and every backend quits where it is; the next start recovers from the write-ahead log,
	 * so only what was committed and written to it survives (commits that did not wait for it may
	 * be gone).
	 */
	synchronized void crash() {
		try {
			long pid = Long.parseLong(Files.readAllLines(this.data.resolve("postmaster.pid")).get(0).trim());
			ProcessHandle postmaster = ProcessHandle.of(pid)
				.orElseThrow(() -> new IllegalStateException("no PostgreSQL running as " + pid));
			// SIGQUIT is PostgreSQL's immediate shutdown (pg_ctl stop -m immediate, which refuses to run as
			// root); the shell's own kill, as a slim image may have no kill command
			Process kill = new ProcessBuilder("sh", "-c", "kill -QUIT " + pid).inheritIO().start();
			if (kill.waitFor() != 0) {
				throw new IllegalStateException("kill -QUIT " + pid + " failed with " + kill.exitValue());
			}
			postmaster.onExit().get(60, TimeUnit.SECONDS);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot crash the embedded PostgreSQL", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException("PostgreSQL did not quit on SIGQUIT", ex);
		}
		// releases the data directory's lock; its own stop then finds no server and logs that as an
		// error with a stack trace, expected here and so muted
		Logger embedded = (Logger) LoggerFactory.getLogger(EmbeddedPostgres.class);
		Level level = embedded.getLevel();
		embedded.setLevel(Level.OFF);
		try {
			stop();
		}
		finally {
			embedded.setLevel(level);
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
			// an acknowledged commit is in the write-ahead log before the answer, as in production, so
			// that a crash keeps it (the embedded server runs without fsync: the machine does not crash)
			.setServerConfig("synchronous_commit", "on")
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
