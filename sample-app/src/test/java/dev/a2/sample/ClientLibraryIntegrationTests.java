package dev.a2.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpServer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JavaScript client ({@code a2-client}) against the running sample: Node's test runner runs the
 * library's tests ({@code a2-client/test/}) and the protocol's conformance script. The sample runs on
 * a PostgreSQL of the test's own, so the tests can restart it (a POST to {@code A2_RESTART_URL}) and
 * find its data again. Skipped, saying what to install, where there is no Node.
 */
class ClientLibraryIntegrationTests {

	private static final Path CLIENT = Path.of("..", "a2-client");

	private static EmbeddedPostgres postgres;

	private static int port;

	private static volatile ConfigurableApplicationContext sample;

	private static HttpServer control;

	@BeforeAll
	static void start() throws IOException {
		Assumptions.assumeTrue(Node.version() != null, "no Node.js here: install it (Debian: 'apt-get install -y nodejs', "
				+ "Node 20 or later) to run the client library's tests and the protocol conformance script");
		postgres = EmbeddedPostgres.builder().setServerConfig("synchronous_commit", "on").start();
		try (ServerSocket free = new ServerSocket(0)) {
			port = free.getLocalPort();
		}
		sample = startSample();
		control = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
		control.createContext("/restart", (exchange) -> {
			// the node test asks: stop the sample (its streams and sockets end) and start it again, same port
			synchronized (ClientLibraryIntegrationTests.class) {
				sample.close();
				sample = startSample();
			}
			exchange.sendResponseHeaders(204, -1);
			exchange.close();
		});
		control.start();
	}

	/**
	 * Runs the sample as these tests see it, to run the node tests by hand: prints the environment to
	 * give them ({@code A2_BASE_URL=… A2_RESTART_URL=… node --test a2-client/test/}), stops on Enter.
	 */
	public static void main(String[] args) throws Exception {
		start();
		System.out.println("A2_BASE_URL=http://localhost:" + port + " A2_RESTART_URL=http://127.0.0.1:"
				+ control.getAddress().getPort() + "/restart A2_PRESENCE_TTL_MS=3000");
		System.in.read();
		stop();
	}

	@AfterAll
	static void stop() throws IOException {
		if (control != null) {
			control.stop(0);
		}
		if (sample != null) {
			sample.close();
		}
		if (postgres != null) {
			postgres.close();
		}
	}

	@Test
	void theClientLibrarysTestsPassAgainstTheSample() throws Exception {
		List<Path> files;
		try (var listed = Files.list(CLIENT.resolve("test"))) {
			files = listed.filter((file) -> file.toString().endsWith(".test.mjs")).sorted().toList();
		}
		assertThat(files).isNotEmpty();
		// one file at a time (a file restarts the server), each in a node of its own
		List<String> failed = new ArrayList<>();
		for (Path file : files) {
			List<String> command = new ArrayList<>(Node.command());
			command.addAll(List.of("--test", "--test-reporter=spec", file.toString()));
			Ran ran = run(command);
			if (ran.exitCode() != 0) {
				failed.add(file.getFileName() + ":\n" + ran.failures());
			}
		}
		// the failures themselves in the message: a build log is often read from its end
		assertThat(failed).as("test files of a2-client/test that failed (their whole output is above)").isEmpty();
	}

	@Test
	void theSamplePassesTheProtocolConformanceScript() throws Exception {
		List<String> command = new ArrayList<>(Node.command());
		command.addAll(List.of(CLIENT.resolve("conformance.mjs").toString(), "http://localhost:" + port));
		assertThat(run(command).exitCode()).as("exit code of node a2-client/conformance.mjs (its output is above)").isZero();
	}

	private static ConfigurableApplicationContext startSample() {
		// arguments, not default properties: they must win over the sample's application.properties
		return new SpringApplicationBuilder(SampleApplication.class).run("--server.port=" + port,
				"--spring.datasource.url=" + postgres.getJdbcUrl("postgres", "postgres"),
				"--spring.datasource.username=postgres", "--a2.presence.ttl=3s", "--sample.assistant.token-delay=20ms",
				"--a2.drain.sweep-interval=200ms");
	}

	/** Runs a node command in the client's directory, printing what it prints. */
	private static Ran run(List<String> command) throws Exception {
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		builder.environment().put("A2_BASE_URL", "http://localhost:" + port);
		builder.environment().put("A2_RESTART_URL", "http://127.0.0.1:" + control.getAddress().getPort() + "/restart");
		builder.environment().put("A2_PRESENCE_TTL_MS", "3000");
		Process process = builder.start();
		StringBuilder output = new StringBuilder();
		Thread reader = new Thread(() -> {
			try (BufferedReader lines = process.inputReader(StandardCharsets.UTF_8)) {
				lines.lines().forEach((line) -> {
					output.append(line).append('\n');
					System.out.println(line);
				});
			}
			catch (IOException ex) {
				// the process ended
			}
		});
		reader.start();
		if (!process.waitFor(10, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new AssertionError("node did not finish within 10 minutes:\n" + output);
		}
		reader.join(10_000);
		return new Ran(process.exitValue(), output.toString());
	}

	/** A node command's exit code and output. */
	record Ran(int exitCode, String output) {

		/** The spec reporter's closing summary of the failed tests, with their errors (or the whole output). */
		String failures() {
			int summary = this.output.lastIndexOf("failing tests:");
			return (summary < 0) ? this.output : this.output.substring(summary);
		}

	}

	/** Where Node is, and whether its WebSocket needs a flag (Node 20 and 21). */
	static final class Node {

		private static List<String> command;

		private Node() {
		}

		static String version() {
			try {
				Process process = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
				String version = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
				return (process.waitFor() == 0) ? version : null;
			}
			catch (IOException | InterruptedException ex) {
				return null;
			}
		}

		static synchronized List<String> command() throws IOException, InterruptedException {
			if (command == null) {
				Process flagged = new ProcessBuilder("node", "--experimental-websocket", "-e",
						"process.exit(typeof WebSocket === 'function' ? 0 : 1)").redirectErrorStream(true).start();
				flagged.getInputStream().readAllBytes();
				command = (flagged.waitFor() == 0) ? List.of("node", "--experimental-websocket") : List.of("node");
			}
			return command;
		}

	}

}
