package dev.a2.autoconfigure;

import java.util.Set;

import dev.a2.store.EventStore;
import dev.a2.store.SnapshotStore;
import dev.a2.store.WorkStore;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDependsOnDatabaseInitializationDetector;

/**
 * Makes A2's stores, and its check of a schema it does not apply itself, wait for every database
 * initializer: A2's own migrations and the application's Flyway, Liquibase or SQL scripts.
 */
class A2StoreDependsOnDatabaseInitializationDetector extends AbstractBeansOfTypeDependsOnDatabaseInitializationDetector {

	@Override
	protected Set<Class<?>> getDependsOnDatabaseInitializationBeanTypes() {
		return Set.of(A2SchemaCheck.class, EventStore.class, SnapshotStore.class, WorkStore.class);
	}

}
