package dev.a2.web;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

import dev.a2.test.TestPostgres;

/**
 * Faults of a session's rows, made by the database: an instance reads as a role that row security
 * applies to (a superuser bypasses it), and a policy of the test's raises an error on the rows it picks.
 */
final class ReadFaults {

	/**
	 * The property that has an instance read as that role. A role that may log in: on Citus the
	 * coordinator connects to the workers as the current role.
	 */
	static final String READ_AS_FAULTY_ROLE = "spring.datasource.hikari.connection-init-sql=SET ROLE a2_fault_reader";

	private ReadFaults() {
	}

	/** Lets the role read and write A2's tables in {@code schema}. */
	static void allowFaultyRole(String schema) throws Exception {
		admin("DO $$ BEGIN CREATE ROLE a2_fault_reader; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
				"ALTER ROLE a2_fault_reader LOGIN", "GRANT USAGE, CREATE ON SCHEMA " + schema + " TO a2_fault_reader");
	}

	/** Runs statements as the database's superuser. */
	static void admin(String... statements) throws Exception {
		TestPostgres.Server server = TestPostgres.server();
		try (Connection connection = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
				Statement statement = connection.createStatement()) {
			for (String sql : statements) {
				statement.execute(sql);
			}
		}
	}

}
