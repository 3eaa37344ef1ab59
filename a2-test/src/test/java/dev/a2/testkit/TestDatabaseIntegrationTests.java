package dev.a2.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The tests' database across test runs: a server that outlives the JVM ({@code A2_TEST_JDBC_URL},
 * as a CI service or a developer's local PostgreSQL) keeps the schemas of the runs before.
 */
class TestDatabaseIntegrationTests {

	@Test
	void theNextTestRunOnTheSameServerGetsSchemasOfItsOwn() throws Exception {
		// two more runs, each a JVM of its own whose first schema is for the same test class
		String first = runOnThisServer();
		String second = runOnThisServer();
		assertThat(first).isNotEqualTo(second);
		try (HikariDataSource admin = TestDatabase.dataSource(TestDatabase.server().jdbcUrl(), 1)) {
			assertThat(JdbcClient.create(admin)
				.sql("SELECT count(*) FROM information_schema.schemata WHERE schema_name IN (?, ?)")
				.params(first, second)
				.query(Long.class)
				.single()).isEqualTo(2);
		}
	}

	@Test
	void aLongTestClassNameStillMakesAValidSchemaEveryTime() {
		String owner = "AVeryLongNameOfATestClassThatDescribesEverythingItChecksInGreatDetail";
		try (HikariDataSource one = TestDatabase.newSchemaDataSource(owner, 1);
				HikariDataSource two = TestDatabase.newSchemaDataSource(owner, 1)) {
			String first = JdbcClient.create(one).sql("SELECT current_schema()").query(String.class).single();
			String second = JdbcClient.create(two).sql("SELECT current_schema()").query(String.class).single();
			assertThat(first).isNotNull().startsWith("a2t_averylongname").hasSizeLessThanOrEqualTo(63);
			assertThat(second).isNotNull().isNotEqualTo(first);
		}
	}

	/** Runs {@link NextRun} in a JVM of its own on this JVM's server; answers the schema it made. */
	private static String runOnThisServer() throws IOException, InterruptedException {
		TestDatabase.Server server = TestDatabase.server();
		ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-cp", System.getProperty("java.class.path"), NextRun.class.getName());
		Map<String, String> environment = builder.environment();
		environment.put("A2_TEST_JDBC_URL", server.jdbcUrl());
		environment.put("A2_TEST_JDBC_USER", server.username());
		environment.put("A2_TEST_JDBC_PASSWORD", server.password());
		builder.redirectErrorStream(true);
		Process run = builder.start();
		String output = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(run.waitFor(2, TimeUnit.MINUTES)).as(output).isTrue();
		assertThat(run.exitValue()).as(output).isZero();
		return output.lines()
			.filter((line) -> line.startsWith(NextRun.SCHEMA))
			.map((line) -> line.substring(NextRun.SCHEMA.length()))
			.findFirst()
			.orElseThrow(() -> new AssertionError("the run printed no schema:\n" + output));
	}

	/** A test run in short: the schema of its first test class, whose name it prints. */
	static final class NextRun {

		static final String SCHEMA = "schema: ";

		public static void main(String[] args) {
			try (HikariDataSource schema = TestDatabase.newSchemaDataSource("OrdersTests", 1)) {
				System.out.println(SCHEMA + JdbcClient.create(schema).sql("SELECT current_schema()").query(String.class).single());
			}
		}

	}

	@Test
	void theEmbeddedServerOutlivesTheApplicationsTheJvmClosesAsItExitsAndThenStops() throws Exception {
		ServerRun run = ServerRun.start("exit");
		String output = run.output();
		assertThat(run.process().exitValue()).as(output).isZero();
		// the application's own work on the database as it closed, while the JVM was exiting
		assertThat(output).contains(ExitingRun.CLOSED + "ok");
		assertThat(output).doesNotContain("has been closed");
		run.assertServerGone();
	}

	@Test
	void theEmbeddedServerStopsWhenTheJvmIsKilled() throws Exception {
		ServerRun run = ServerRun.start("wait");
		run.process().destroyForcibly();
		run.output();
		run.assertServerGone();
	}

	/**
	 * A JVM of its own with the embedded server (no {@code A2_TEST_JDBC_URL}), and the server's
	 * postmaster and data directory as it printed them.
	 */
	private record ServerRun(Process process, StringBuilder lines, Thread reader, ProcessHandle server,
			Path dataDirectory) {

		static ServerRun start(String mode) throws Exception {
			assumeFalse(ContainerDatabase.dockerAvailable(), "Docker runs here: a JVM of its own would use a container");
			ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
					"-cp", System.getProperty("java.class.path"), ExitingRun.class.getName(), mode);
			builder.environment().remove("A2_TEST_JDBC_URL");
			builder.redirectErrorStream(true);
			Process process = builder.start();
			StringBuilder lines = new StringBuilder();
			CompletableFuture<String> server = new CompletableFuture<>();
			Thread reader = new Thread(() -> {
				try (BufferedReader output = process.inputReader(StandardCharsets.UTF_8)) {
					for (String line = output.readLine(); line != null; line = output.readLine()) {
						synchronized (lines) {
							lines.append(line).append('\n');
						}
						if (line.startsWith(ExitingRun.SERVER)) {
							server.complete(line.substring(ExitingRun.SERVER.length()));
						}
					}
				}
				catch (IOException ex) {
					// the process is gone
				}
				server.completeExceptionally(new AssertionError("the run printed no server:\n" + lines));
			});
			reader.start();
			Path dataDirectory = Path.of(server.get(2, TimeUnit.MINUTES));
			long pid = Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).trim());
			return new ServerRun(process, lines, reader, ProcessHandle.of(pid).orElseThrow(), dataDirectory);
		}

		String output() throws InterruptedException {
			assertThat(this.process.waitFor(2, TimeUnit.MINUTES)).as("the run's JVM exited").isTrue();
			this.reader.join();
			synchronized (this.lines) {
				return this.lines.toString();
			}
		}

		void assertServerGone() throws Exception {
			try {
				this.server.onExit().get(1, TimeUnit.MINUTES);
			}
			catch (TimeoutException ex) {
				this.server.destroy();
				throw new AssertionError("the embedded server outlived the JVM that started it");
			}
			Instant deadline = Instant.now().plus(Duration.ofMinutes(1));
			while (Files.exists(this.dataDirectory) && Instant.now().isBefore(deadline)) {
				Thread.onSpinWait();
			}
			assertThat(this.dataDirectory).as("the server's data directory").doesNotExist();
		}

	}

	/**
	 * A test run in short, on the embedded server: an application that works on the database as it
	 * closes, closed by Spring Boot's shutdown hook when the JVM exits ({@code exit}), or a JVM that
	 * waits to be killed ({@code wait}).
	 */
	static final class ExitingRun {

		static final String SERVER = "server: ";

		static final String CLOSED = "closed: ";

		public static void main(String[] args) throws Exception {
			HikariDataSource pool = TestDatabase.newSchemaDataSource("ExitingRun", 2);
			new SpringApplicationBuilder(Closing.class).web(WebApplicationType.NONE)
				.initializers((context) -> context.getBeanFactory().registerSingleton("pool", pool))
				.run();
			System.out.println(SERVER + JdbcClient.create(pool).sql("SHOW data_directory").query(String.class).single());
			if (args[0].equals("wait")) {
				System.in.read();
			}
			System.exit(0);
		}

		@Configuration(proxyBeanMethods = false)
		static class Closing {

			/** Work on the database that takes a while, as an application's last writes can. */
			@Bean
			DisposableBean lastWrites(HikariDataSource pool) {
				return () -> {
					try {
						JdbcClient.create(pool).sql("SELECT pg_sleep(1)").query().singleValue();
						System.out.println(CLOSED + "ok");
					}
					catch (RuntimeException ex) {
						System.out.println(CLOSED + ex);
					}
					pool.close();
				};
			}

		}

	}

}
