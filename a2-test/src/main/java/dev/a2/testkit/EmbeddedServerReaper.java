package dev.a2.testkit;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jspecify.annotations.Nullable;

/**
 * Stops the tests' embedded PostgreSQL once the JVM that started it has gone, from a process of its
 * own whose standard input is a pipe from that JVM: the pipe ends when the JVM does, however it ends.
 * <p>
 * Not a shutdown hook: the JVM runs its hooks all at once, Spring Boot's among them, which closes the
 * test applications (A2's consumers, listener and connection pools). A hook that stopped the server
 * meanwhile left them working on a server going away: broken connections logged, each pool's close
 * waiting for its connections, the JVM's exit so late that Surefire killed it. A JVM killed outright
 * runs no hook at all, and left the server running.
 */
final class EmbeddedServerReaper {

	/**
	 * The reaper's process, held for as long as the JVM lives: its standard input is the pipe whose
	 * end stops the server, and a process object no longer referenced has that pipe closed.
	 */
	private static @Nullable Process reaper;

	private EmbeddedServerReaper() {
	}

	/**
	 * Has {@code postgres} stopped and {@code dataDirectory} deleted when this JVM exits; without a
	 * {@code java} launcher or a class path to start the reaper from, a shutdown hook does it.
	 */
	static synchronized void watch(EmbeddedPostgres postgres, Path dataDirectory) {
		Optional<ProcessHandle> server = postmaster(dataDirectory);
		Optional<Instant> started = server.flatMap((process) -> process.info().startInstant());
		Path java = Path.of(System.getProperty("java.home"), "bin", "java");
		Path classes = classes();
		if (classes != null && Files.isExecutable(java) && server.isPresent() && started.isPresent()) {
			try {
				reaper = new ProcessBuilder(java.toString(), "-Xmx32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
						"-cp", classes.toString(), EmbeddedServerReaper.class.getName(), Long.toString(server.get().pid()),
						started.get().toString(), dataDirectory.toString())
					// not inherited: a test runner waits for the end of the JVM's output, which the reaper outlives
					.redirectOutput(ProcessBuilder.Redirect.DISCARD)
					.redirectError(ProcessBuilder.Redirect.DISCARD)
					.start();
				return;
			}
			catch (IOException ex) {
				// the shutdown hook below, which is better than a server left running
			}
		}
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			try {
				postgres.close();
			}
			catch (IOException ex) {
				// the JVM is going away; the server's directory is a temporary one
			}
		}, "a2-test-embedded-postgres-stop"));
	}

	/**
	 * The server's postmaster, from the pid file in its data directory: the process the embedded server
	 * started is {@code pg_ctl}, which has ended once the server runs.
	 */
	private static Optional<ProcessHandle> postmaster(Path dataDirectory) {
		try {
			List<String> lines = Files.readAllLines(dataDirectory.resolve("postmaster.pid"));
			return lines.isEmpty() ? Optional.empty() : ProcessHandle.of(Long.parseLong(lines.get(0).trim()));
		}
		catch (IOException | NumberFormatException ex) {
			return Optional.empty();
		}
	}

	/** Where this class was loaded from: a directory or a jar, or null when it is neither. */
	private static @Nullable Path classes() {
		CodeSource source = EmbeddedServerReaper.class.getProtectionDomain().getCodeSource();
		if (source == null || source.getLocation() == null || !"file".equals(source.getLocation().getProtocol())) {
			return null;
		}
		try {
			Path path = Path.of(source.getLocation().toURI());
			return Files.exists(path) ? path : null;
		}
		catch (URISyntaxException | IllegalArgumentException ex) {
			return null;
		}
	}

	/**
	 * The reaper: waits for the end of its standard input, then stops the server (arguments: its pid,
	 * its start time, its data directory) and deletes the data directory.
	 */
	public static void main(String[] args) throws IOException, InterruptedException {
		long pid = Long.parseLong(args[0]);
		Instant started = Instant.parse(args[1]);
		Path dataDirectory = Path.of(args[2]);
		System.in.transferTo(OutputStream.nullOutputStream());
		// the start time tells the server from a process that took its pid after it had ended
		Optional<ProcessHandle> server = ProcessHandle.of(pid)
			.filter((process) -> process.info().startInstant().map(started::equals).orElse(false));
		if (server.isPresent()) {
			// on Unix a SIGTERM, PostgreSQL's smart shutdown: the JVM's connections ended with it
			server.get().destroy();
			try {
				server.get().onExit().get(30, TimeUnit.SECONDS);
			}
			catch (TimeoutException | ExecutionException ex) {
				// a client of another process still connected
				server.get().destroyForcibly();
				server.get().onExit().join();
			}
		}
		delete(dataDirectory);
	}

	private static void delete(Path directory) throws IOException {
		if (!Files.exists(directory)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(directory)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> {
				try {
					Files.deleteIfExists(path);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			});
		}
	}

}
