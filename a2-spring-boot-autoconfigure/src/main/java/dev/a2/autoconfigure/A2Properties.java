package dev.a2.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of A2, under {@code a2.*}.
 */
@ConfigurationProperties("a2")
public class A2Properties {

	private final Store store = new Store();

	private final State state = new State();

	public Store getStore() {
		return this.store;
	}

	public State getState() {
		return this.state;
	}

	/** When A2 applies its schema migrations. */
	public enum SchemaInitialization {

		/** At every start-up, applying only what the database lacks. */
		ALWAYS,

		/** Never: the schema is managed outside the application. */
		NEVER

	}

	public static class Store {

		/**
		 * Whether A2 applies its schema migrations (recorded in their own table,
		 * a2_schema_history) at start-up. A migration that fails stops the start-up.
		 */
		private SchemaInitialization initializeSchema = SchemaInitialization.ALWAYS;

		public SchemaInitialization getInitializeSchema() {
			return this.initializeSchema;
		}

		public void setInitializeSchema(SchemaInitialization initializeSchema) {
			this.initializeSchema = initializeSchema;
		}

	}

	public static class State {

		/**
		 * Snapshot each reducer's state every this many events, so a read folds at most that many.
		 */
		private int snapshotEvery = 100;

		/**
		 * How many (session, reducer) states each instance keeps in memory.
		 */
		private int cacheSize = 10_000;

		public int getSnapshotEvery() {
			return this.snapshotEvery;
		}

		public void setSnapshotEvery(int snapshotEvery) {
			this.snapshotEvery = snapshotEvery;
		}

		public int getCacheSize() {
			return this.cacheSize;
		}

		public void setCacheSize(int cacheSize) {
			this.cacheSize = cacheSize;
		}

	}

}
