package dev.a2;

import java.util.UUID;

import javax.sql.DataSource;

import jakarta.validation.Validation;
import jakarta.validation.Validator;
import jakarta.validation.ValidatorFactory;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Servers and row counts for the tests of this package.
 */
final class A2TestSupport {

	private static final ValidatorFactory validation = Validation.buildDefaultValidatorFactory();

	private A2TestSupport() {
	}

	static Validator validator() {
		return validation.getValidator();
	}

	static A2Server.Builder server(DataSource dataSource) {
		return A2Server.builder()
			.dataSource(dataSource)
			.contract(TestContracts.chat())
			.payloadValidator(new BeanValidationPayloadValidator(validator()));
	}

	static String newSessionId() {
		return "s-" + UUID.randomUUID();
	}

	/** Every stored row of a session, clear markers included. */
	static long rows(DataSource dataSource, String session) {
		return JdbcClient.create(dataSource)
			.sql("SELECT count(*) FROM a2_event WHERE session_id = ?")
			.param(session)
			.query(Long.class)
			.single();
	}

	/** Whether the tests run on a Citus coordinator ({@code A2_TEST_CITUS_URL}). */
	static boolean onCitus(DataSource dataSource) {
		return Boolean.TRUE.equals(JdbcClient.create(dataSource)
			.sql("SELECT to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL")
			.query(Boolean.class)
			.single());
	}

}
