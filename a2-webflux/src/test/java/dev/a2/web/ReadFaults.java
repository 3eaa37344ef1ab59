package dev.a2.web;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

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

	/**
	 * Makes the faulty role's reads of one session's events and presence fail: a policy runs
	 * {@code onRead} (PL/pgSQL, such as a {@code pg_sleep}) and raises an error for its rows; the role still
	 * writes every row, and reads the other sessions'.
	 */
	static void failReadsOf(String schema, String session, String onRead) throws Exception {
		List<String> statements = new ArrayList<>();
		statements.add("""
				CREATE FUNCTION SCHEMA.readable(session text) RETURNS boolean LANGUAGE plpgsql AS $f$
				BEGIN
				    IF session = 'SESSION' THEN
				        ON_READ
				        RAISE EXCEPTION 'the rows of session % cannot be read', session;
				    END IF;
				    RETURN true;
				END $f$""".replace("SCHEMA", schema).replace("SESSION", session).replace("ON_READ", onRead));
		for (String table : List.of("a2_event", "a2_presence")) {
			String name = schema + "." + table;
			statements.addAll(List.of("ALTER TABLE " + name + " ENABLE ROW LEVEL SECURITY",
					"ALTER TABLE " + name + " FORCE ROW LEVEL SECURITY",
					"CREATE POLICY reads ON " + name + " FOR SELECT USING (" + schema + ".readable(session_id))",
					"CREATE POLICY inserts ON " + name + " FOR INSERT WITH CHECK (true)",
					"CREATE POLICY updates ON " + name + " FOR UPDATE USING (true)",
					"CREATE POLICY deletes ON " + name + " FOR DELETE USING (true)"));
		}
		admin(statements.toArray(String[]::new));
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
