package dev.a2.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One slot of the application: a real JVM running the packaged jar on a port of its own. A kill is
 * a {@code SIGKILL} (no shutdown hook, no graceful stop); the slot then starts a new JVM on the
 * same port.
 */
final class AppProcess {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final int slot;

	private final int port;

	private final Path jar;

	private final Path logs;

	private volatile Process process;

	private volatile boolean ready;

	private int generation;

	AppProcess(int slot, int port, Path jar, Path logs) {
		this.slot = slot;
		this.port = port;
		this.jar = jar;
		this.logs = logs;
	}

	int port() {
		return this.port;
	}

	int slot() {
		return this.slot;
	}

	/** Whether writers may send to it: started, answering, and not being killed. */
	boolean ready() {
		return this.ready;
	}

	URI uri(String path) {
		return URI.create("http://localhost:" + this.port + path);
	}

	synchronized void start(String jdbcUrl) {
		this.generation++;
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				// small and quick to start: three of these share two cores with PostgreSQL and the harness
				"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-jar", this.jar.toString(),
				"--server.port=" + this.port, "--spring.datasource.url=" + jdbcUrl, "--spring.datasource.username=postgres",
				"--spring.datasource.password=postgres"));
		Path log = this.logs.resolve("app-" + this.slot + "-" + this.generation + ".log");
		try {
			Files.createDirectories(this.logs);
			this.process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot start " + command, ex);
		}
	}

	/** Waits until the application answers HTTP (it listens only once started: schema migrated, consumers on). */
	void awaitReady(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("process " + this.slot + " exited with " + this.process.exitValue()
						+ " while starting; see " + currentLog());
			}
			try {
				HttpResponse<Void> response = http.send(HttpRequest.newBuilder(uri("/actuator/health"))
					.timeout(Duration.ofSeconds(2))
					.build(), HttpResponse.BodyHandlers.discarding());
				if (response.statusCode() == 200) {
					this.ready = true;
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			pause(Duration.ofMillis(200));
		}
		throw new IllegalStateException("process " + this.slot + " did not answer within " + timeout + "; see " + currentLog());
	}

	/** When this process's sweep last succeeded, from its health ({@code a2} contributor), or null when unknown. */
	Instant lastSweep() {
		try {
			HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/actuator/health/a2"))
				.timeout(Duration.ofSeconds(5))
				.build(), HttpResponse.BodyHandlers.ofString());
			JsonNode last = json.readTree(response.body()).path("details").path("lastSweep");
			return last.isString() && !last.asString().equals("none yet") ? Instant.parse(last.asString()) : null;
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

	/** SIGKILL: what a crash, an OOM killer or a pulled plug does. */
	void kill() {
		this.ready = false;
		Process killed = this.process;
		killed.destroyForcibly();
		try {
			killed.waitFor(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** SIGTERM, as an orchestrator stops an instance at the end of the run. */
	void stop() {
		this.ready = false;
		Process stopped = this.process;
		if (stopped == null) {
			return;
		}
		stopped.destroy();
		try {
			if (!stopped.waitFor(30, TimeUnit.SECONDS)) {
				stopped.destroyForcibly();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			stopped.destroyForcibly();
		}
	}

	/** SIGKILL without waiting: for a shutdown hook. */
	void destroy() {
		Process current = this.process;
		if (current != null) {
			current.destroyForcibly();
		}
	}

	/** Whether this JVM is still running (one that dies without being killed is a failure of the run). */
	boolean alive() {
		return this.process != null && this.process.isAlive();
	}

	Path currentLog() {
		return this.logs.resolve("app-" + this.slot + "-" + this.generation + ".log");
	}

	static void pause(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
