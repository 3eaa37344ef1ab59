package dev.a2.testkit;

import java.nio.file.Files;
import java.nio.file.Path;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The Testcontainers way, in a class of its own so that Testcontainers (optional) is only loaded when
 * it is on the class path.
 */
final class ContainerDatabase {

	private ContainerDatabase() {
	}

	static boolean dockerAvailable() {
		// asking Testcontainers where there is plainly no Docker only logs errors and takes time
		if (System.getenv("DOCKER_HOST") == null && !Files.exists(Path.of("/var/run/docker.sock"))
				&& !Files.exists(Path.of(System.getProperty("user.home"), ".testcontainers.properties"))) {
			return false;
		}
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

	@SuppressWarnings("resource") // lives as long as the JVM; Testcontainers' reaper removes it
	static TestDatabase.Server start() {
		PostgreSQLContainer container = new PostgreSQLContainer("postgres:17-alpine").withCommand("postgres", "-c",
				"max_connections=300");
		container.start();
		return new TestDatabase.Server(container.getJdbcUrl(), container.getUsername(), container.getPassword());
	}

}
