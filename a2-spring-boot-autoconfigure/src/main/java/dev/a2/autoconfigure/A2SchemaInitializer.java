package dev.a2.autoconfigure;

import javax.sql.DataSource;

import dev.a2.store.postgres.PostgresSchema;

import org.springframework.beans.factory.InitializingBean;

/**
 * Applies A2's schema migrations when the context starts, before the store is used. A failure is
 * never swallowed: the application does not start on a schema it cannot use.
 */
public class A2SchemaInitializer implements InitializingBean {

	private final DataSource dataSource;

	private final boolean distribute;

	public A2SchemaInitializer(DataSource dataSource) {
		this(dataSource, true);
	}

	/** @param distribute whether the tables are distributed on a Citus coordinator ({@code a2.store.distribute}) */
	public A2SchemaInitializer(DataSource dataSource, boolean distribute) {
		this.dataSource = dataSource;
		this.distribute = distribute;
	}

	@Override
	public void afterPropertiesSet() {
		PostgresSchema.migrate(this.dataSource, this.distribute);
	}

}
