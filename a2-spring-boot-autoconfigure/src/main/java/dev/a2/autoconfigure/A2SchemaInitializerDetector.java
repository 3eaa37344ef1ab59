package dev.a2.autoconfigure;

import java.util.Set;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;

/**
 * Tells Spring Boot that {@link A2SchemaInitializer} initializes a database, so that what depends
 * on database initialization starts after it.
 */
class A2SchemaInitializerDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

	@Override
	protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
		return Set.of(A2SchemaInitializer.class);
	}

}
