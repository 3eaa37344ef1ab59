package dev.a2.test;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The Testcontainers way, in a class of its own so that Testcontainers is only touched when Docker is
 * asked about.
 */
final class ContainerPostgres {

	private ContainerPostgres() {
	}

	static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

	@SuppressWarnings("resource") // lives as long as the JVM; Testcontainers' reaper removes it
	static TestPostgres.Server start() {
		PostgreSQLContainer container = new PostgreSQLContainer("postgres:17-alpine").withCommand("postgres",
				"-c", "max_connections=300");
		container.start();
		return new TestPostgres.Server(container.getJdbcUrl(), container.getUsername(), container.getPassword());
	}

}
