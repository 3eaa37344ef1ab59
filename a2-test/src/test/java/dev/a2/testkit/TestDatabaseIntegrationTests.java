package dev.a2.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

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

}
