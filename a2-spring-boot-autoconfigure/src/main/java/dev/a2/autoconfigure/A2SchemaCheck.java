package dev.a2.autoconfigure;

import java.util.List;

import javax.sql.DataSource;

import dev.a2.store.postgres.PostgresSchema;

import org.springframework.beans.factory.InitializingBean;

/**
 * With {@code a2.store.initialize-schema=never}, finds at start-up that A2's migrations were applied
 * (by the application's Flyway or Liquibase, or by hand), after the application's own database
 * initializers. Without it an application whose tables were never made started, and then failed every
 * push, read and sweep with the database's "relation a2_session does not exist".
 */
public class A2SchemaCheck implements InitializingBean {

	private final DataSource dataSource;

	public A2SchemaCheck(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	@Override
	public void afterPropertiesSet() {
		List<String> missing = PostgresSchema.missing(this.dataSource);
		if (!missing.isEmpty()) {
			throw new IllegalStateException("A2's tables lack migration(s) " + String.join(", ", missing)
					+ ", and a2.store.initialize-schema=never leaves them to the application: apply A2's migrations "
					+ "(dev/a2/store/postgres/migration/V*.sql in a2-core, in order, recorded in a2_schema_history) "
					+ "or set a2.store.initialize-schema=always");
		}
	}

}
