package dev.a2;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import javax.sql.DataSource;

import dev.a2.state.StateReader;
import dev.a2.store.EventStore;
import dev.a2.store.SnapshotStore;
import dev.a2.store.postgres.PostgresEventStore;
import dev.a2.store.postgres.PostgresSnapshotStore;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The entry point of A2: holds the contracts and opens their sessions.
 *
 * <pre>{@code
 * A2Server a2 = A2Server.builder().dataSource(dataSource).contract(chat).build();
 * a2.session("chat", "room-1").append(NewEvent.of("message.sent", new MessageSent("hi")));
 * }</pre>
 */
public final class A2Server {

	/** The most events one append may carry. */
	public static final int MAX_EVENTS_PER_APPEND = 1000;

	private final Map<String, Contract> contracts;

	final EventStore events;

	final SnapshotStore snapshots;

	final PayloadBinder payloads;

	final StateReader state;

	private A2Server(Builder builder, EventStore events, SnapshotStore snapshots) {
		this.contracts = Map.copyOf(builder.contracts);
		this.events = events;
		this.snapshots = snapshots;
		this.payloads = new PayloadBinder(builder.jsonMapper, builder.payloadValidator);
		this.state = new StateReader(events, snapshots, builder.jsonMapper, builder.snapshotEvery, builder.stateCacheSize);
	}

	public static Builder builder() {
		return new Builder();
	}

	/** The registered contracts. */
	public Collection<Contract> contracts() {
		return this.contracts.values();
	}

	/** The contract of that name; {@code UNKNOWN_CONTRACT} when none is registered. */
	public Contract contract(String name) {
		Contract contract = this.contracts.get(name);
		if (contract == null) {
			throw new A2Exception(ErrorCode.UNKNOWN_CONTRACT,
					"no contract named '" + name + "'; registered: " + this.contracts.keySet());
		}
		return contract;
	}

	/**
	 * A session of a contract. Opening one reads nothing: a session exists once something is
	 * appended to it.
	 * @throws A2Exception {@code UNKNOWN_CONTRACT}, or {@code INVALID_PAYLOAD} for a malformed id
	 */
	public Session session(String contract, String sessionId) {
		return new Session(this, contract(contract), SessionIds.check(sessionId));
	}

	/** Builds an {@link A2Server}. */
	public static final class Builder {

		private final Map<String, Contract> contracts = new LinkedHashMap<>();

		private @Nullable DataSource dataSource;

		private @Nullable PlatformTransactionManager transactionManager;

		private @Nullable EventStore eventStore;

		private @Nullable SnapshotStore snapshotStore;

		private JsonMapper jsonMapper = JsonMapper.builder().build();

		private @Nullable PayloadValidator payloadValidator;

		private int snapshotEvery = 100;

		private int stateCacheSize = 10_000;

		private Builder() {
		}

		/** Registers a contract; names must be unique. */
		public Builder contract(Contract contract) {
			Objects.requireNonNull(contract, "contract");
			if (this.contracts.putIfAbsent(contract.name(), contract) != null) {
				throw new IllegalArgumentException("two contracts are named '" + contract.name() + "'; contract names must be unique");
			}
			return this;
		}

		/** Stores everything in this PostgreSQL database (unless stores are given). */
		public Builder dataSource(DataSource dataSource) {
			this.dataSource = dataSource;
			return this;
		}

		/** The application's transaction manager over the data source, so appends join its transactions. */
		public Builder transactionManager(PlatformTransactionManager transactionManager) {
			this.transactionManager = transactionManager;
			return this;
		}

		public Builder eventStore(EventStore eventStore) {
			this.eventStore = eventStore;
			return this;
		}

		public Builder snapshotStore(SnapshotStore snapshotStore) {
			this.snapshotStore = snapshotStore;
			return this;
		}

		/** The mapper that binds payloads and writes state; the application's, so its modules apply. */
		public Builder jsonMapper(JsonMapper jsonMapper) {
			this.jsonMapper = Objects.requireNonNull(jsonMapper, "jsonMapper");
			return this;
		}

		/** Validates payloads after binding; none by default. */
		public Builder payloadValidator(@Nullable PayloadValidator payloadValidator) {
			this.payloadValidator = payloadValidator;
			return this;
		}

		/** Snapshot reducer state every this many events; 100 by default. */
		public Builder snapshotEvery(int snapshotEvery) {
			this.snapshotEvery = snapshotEvery;
			return this;
		}

		/** How many (session, reducer) states to keep in memory; 10,000 by default. */
		public Builder stateCacheSize(int stateCacheSize) {
			this.stateCacheSize = stateCacheSize;
			return this;
		}

		public A2Server build() {
			if (this.contracts.isEmpty()) {
				throw new IllegalStateException("an A2Server needs at least one contract");
			}
			EventStore events = this.eventStore;
			SnapshotStore snapshots = this.snapshotStore;
			if (events == null || snapshots == null) {
				DataSource dataSource = this.dataSource;
				if (dataSource == null) {
					throw new IllegalStateException("an A2Server needs a DataSource (or both an EventStore and a SnapshotStore)");
				}
				if (events == null) {
					PlatformTransactionManager transactionManager = (this.transactionManager != null) ? this.transactionManager
							: new DataSourceTransactionManager(dataSource);
					events = new PostgresEventStore(dataSource, transactionManager);
				}
				if (snapshots == null) {
					snapshots = new PostgresSnapshotStore(dataSource);
				}
			}
			return new A2Server(this, events, snapshots);
		}

	}

}
