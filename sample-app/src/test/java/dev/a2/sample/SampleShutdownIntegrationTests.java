package dev.a2.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample as a newcomer runs it, in a JVM of its own on its embedded PostgreSQL, stopped the way a
 * terminal or a container stops it (SIGTERM): it closes without a broken connection or an error.
 */
class SampleShutdownIntegrationTests {

	private static final String STARTED = "Started SampleApplication";

	@Test
	void theSampleStopsCleanlyOnItsEmbeddedDatabase() throws Exception {
		ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-cp", System.getProperty("java.class.path"), SampleApplication.class.getName(), "--server.port=0");
		builder.environment().remove("SPRING_DATASOURCE_URL");
		builder.redirectErrorStream(true);
		Process sample = builder.start();
		StringBuilder output = new StringBuilder();
		CompletableFuture<Void> started = new CompletableFuture<>();
		Thread reader = new Thread(() -> {
			try (BufferedReader lines = sample.inputReader(StandardCharsets.UTF_8)) {
				for (String line = lines.readLine(); line != null; line = lines.readLine()) {
					synchronized (output) {
						output.append(line).append('\n');
					}
					if (line.contains(STARTED)) {
						started.complete(null);
					}
				}
			}
			catch (IOException ex) {
				// the process is gone
			}
			started.completeExceptionally(new AssertionError("the sample did not start:\n" + output));
		});
		reader.start();
		try {
			started.get(3, TimeUnit.MINUTES);
			// the handle's, not Process.destroy(), which also closes the pipe the sample still writes its log to
			sample.toHandle().destroy();
			assertThat(sample.waitFor(2, TimeUnit.MINUTES)).as("the sample stopped").isTrue();
			reader.join();
		}
		finally {
			sample.destroyForcibly();
		}
		String log;
		synchronized (output) {
			log = output.toString();
		}
		String shutdown = log.substring(log.indexOf(STARTED));
		assertThat(shutdown).as(shutdown).doesNotContain(" WARN ").doesNotContain(" ERROR ").doesNotContain("Exception");
		assertThat(shutdown).contains("Graceful shutdown complete");
	}

}
