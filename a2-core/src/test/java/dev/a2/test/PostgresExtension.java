package dev.a2.test;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.a2.store.postgres.PostgresSchema;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test class a {@link DataSource} on a schema of its own with A2's tables migrated: declare
 * a {@code DataSource} parameter on a constructor, a {@code @BeforeAll}/{@code @BeforeEach} method
 * or a test.
 */
public final class PostgresExtension implements ParameterResolver, AfterAllCallback {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(PostgresExtension.class);

	@Override
	public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
		return parameter.getParameter().getType() == DataSource.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
		ExtensionContext classContext = classContext(context);
		return classContext.getStore(NAMESPACE).computeIfAbsent("dataSource", (key) -> {
			HikariDataSource dataSource = TestPostgres.newSchemaDataSource(classContext.getRequiredTestClass().getSimpleName(), 20);
			PostgresSchema.migrate(dataSource);
			return dataSource;
		}, HikariDataSource.class);
	}

	@Override
	public void afterAll(ExtensionContext context) {
		HikariDataSource dataSource = context.getStore(NAMESPACE).get("dataSource", HikariDataSource.class);
		if (dataSource != null) {
			dataSource.close();
		}
	}

	private static ExtensionContext classContext(ExtensionContext context) {
		ExtensionContext current = context;
		while (current.getParent().isPresent() && current.getTestMethod().isPresent()) {
			current = current.getParent().get();
		}
		return current;
	}

}
