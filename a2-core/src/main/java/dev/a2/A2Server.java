package dev.a2;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

import javax.sql.DataSource;

import dev.a2.drain.Drainer;
import dev.a2.drain.ScheduledDeliveries;
import dev.a2.live.SessionChanges;
import dev.a2.state.StateReader;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import dev.a2.store.DeadLetter;
import dev.a2.store.EventStore;
import dev.a2.store.PresenceStore;
import dev.a2.store.SessionHead;
import dev.a2.store.SnapshotStore;
import dev.a2.store.StoreTransactionTemplate;
import dev.a2.store.WorkStore;
import dev.a2.store.WorkStore.ScheduledTask;
import dev.a2.store.postgres.PostgresEventStore;
import dev.a2.store.postgres.PostgresPresenceStore;
import dev.a2.store.postgres.PostgresSnapshotStore;
import dev.a2.store.postgres.PostgresWorkStore;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The entry point of A2: holds the contracts and consumers, opens sessions, and runs the consumers
 * durably. Close it to stop the consumers gracefully.
 *
 * <pre>{@code
 * A2Server a2 = A2Server.builder().dataSource(dataSource).contract(chat).consumer(assistant).build();
 * a2.session("chat", "room-1").append(NewEvent.of("message.sent", new MessageSent("hi")));
 * }</pre>
 */
public final class A2Server implements AutoCloseable {

	/** The most events one append may carry. */
	public static final int MAX_EVENTS_PER_APPEND = 1000;

	private final Map<String, Contract> contracts;

	private final Map<String, Map<String, Consumer>> consumers;

	private final Clock clock;

	private final Duration stopGrace;

	final EventStore events;

	final SnapshotStore snapshots;

	final @Nullable WorkStore work;

	final TransactionOperations transactions;

	/**
	 * Transactions that never join the caller's: for writes after the caller's transaction committed,
	 * whose connection is still bound to the thread then.
	 */
	final TransactionOperations separateTransactions;

	final PayloadBinder payloads;

	final StateReader state;

	final ObservationRegistry observations;

	final SessionChanges changes;

	final @Nullable PresenceStore presence;

	final Duration presenceTtl;

	private volatile Instant presenceSweptAt = Instant.MIN;

	final List<RunInterceptor> interceptors;

	private final DrainSettings drainSettings;

	private final @Nullable Drainer drainer;

	/** Whether the sweep delivers scheduled tasks here though no drainer does (a server without consumers). */
	private final boolean deliversSchedules;

	private volatile boolean closed;

	private A2Server(Builder builder, EventStore events, SnapshotStore snapshots, @Nullable WorkStore work,
			@Nullable PresenceStore presence, TransactionOperations transactions, TransactionOperations separateTransactions) {
		this.contracts = Map.copyOf(builder.contracts);
		this.consumers = checkedConsumers(builder.consumers, this.contracts);
		this.clock = builder.clock;
		this.stopGrace = builder.stopGrace;
		this.events = events;
		this.snapshots = snapshots;
		this.work = work;
		this.transactions = transactions;
		this.separateTransactions = separateTransactions;
		this.observations = builder.observations;
		this.changes = builder.changes;
		this.presence = presence;
		this.presenceTtl = builder.presenceTtl;
		this.payloads = new PayloadBinder(builder.jsonMapper, builder.payloadValidator);
		this.state = new StateReader(events, snapshots, builder.jsonMapper, builder.snapshotEvery, builder.stateCacheSize);
		this.interceptors = List.copyOf(builder.interceptors);
		this.drainSettings = builder.drain;
		this.drainer = (work != null && !builder.consumers.isEmpty() && builder.runConsumers)
				? new Drainer(new ServerDrainHost(this), work, builder.drain, builder.scheduling) : null;
		this.deliversSchedules = work != null && this.drainer == null && builder.runConsumers;
	}

	/** A builder; a {@code DataSource} (or the stores) and at least one contract are required. */
	public static Builder builder() {
		return new Builder();
	}

	/** The registered contracts. */
	public Collection<Contract> contracts() {
		return this.contracts.values();
	}

	/** The contract of that name; {@code UNKNOWN_CONTRACT} when none is registered. */
	public Contract contract(@Nullable String name) {
		// Map.copyOf answers a null key with a NullPointerException, not with "none"
		Contract contract = (name != null) ? this.contracts.get(name) : null;
		if (contract == null) {
			// names what was asked, never the contracts there are: the caller may be anyone
			throw new A2Exception(ErrorCode.UNKNOWN_CONTRACT, "no contract named '" + name + "'");
		}
		return contract;
	}

	/** The registered consumers, of every contract. */
	public List<Consumer> consumers() {
		List<Consumer> all = new ArrayList<>();
		this.consumers.values().forEach((byName) -> all.addAll(byName.values()));
		return all;
	}

	/** A contract's consumers. */
	Collection<Consumer> consumers(String contract) {
		return this.consumers.getOrDefault(contract, Map.of()).values();
	}

	@Nullable Consumer consumer(String contract, String name) {
		return this.consumers.getOrDefault(contract, Map.of()).get(name);
	}

	/** The clock of leases, back-offs, schedules and presence (the system clock unless one was given). */
	public Clock clock() {
		return this.clock;
	}

	/** Where this server tells that sessions changed, and hears of changes by other instances. */
	public SessionChanges changes() {
		return this.changes;
	}

	/** The store of the events, for readers that serve them as stored (the streams). */
	public EventStore eventStore() {
		return this.events;
	}

	/**
	 * A session of a contract. Opening one reads nothing: a session exists once something is
	 * appended to it.
	 * @throws A2Exception {@code UNKNOWN_CONTRACT}, or {@code INVALID_PAYLOAD} for a malformed id
	 */
	public Session session(String contract, String sessionId) {
		return new Session(this, contract(contract), SessionIds.check(sessionId));
	}

	/**
	 * Finds due consumer work across the database (lapsed leases, passed back-offs, work nobody
	 * claimed, backfills, scheduled tasks) and starts draining it on this instance. Call it
	 * periodically (the Spring Boot starter does, every second); instances share the work. A server
	 * without consumers delivers its due scheduled tasks all the same (unless it was built not to run
	 * consumers: the instances that run them deliver them).
	 * @return how many sessions it started draining
	 * @throws A2Exception {@code STORE_UNAVAILABLE} when PostgreSQL cannot be reached (the next sweep
	 * tries again)
	 */
	public int sweep() {
		sweepPresence();
		WorkStore work = this.work;
		if (this.deliversSchedules && work != null) {
			// no consumers, so no drainer, but what the application scheduled is due all the same
			ScheduledDeliveries.deliverDue(work, this.clock.instant(), this.contracts.keySet(), this::deliver, () -> this.closed);
		}
		return (this.drainer != null) ? this.drainer.sweep() : 0;
	}

	/**
	 * Renews the leases of the attempts running on this instance now. The drainer does it on its own
	 * timer unless it was built with {@link DrainScheduling#MANUAL}.
	 */
	public void heartbeat() {
		if (this.drainer != null) {
			this.drainer.heartbeat();
		}
	}

	/** How this server runs consumers. */
	public DrainSettings drainSettings() {
		return this.drainSettings;
	}

	/** What the drainer of this instance is doing now ({@link DrainActivity#IDLE} when it runs no consumers). */
	public DrainActivity drainActivity() {
		return (this.drainer != null) ? this.drainer.activity() : DrainActivity.IDLE;
	}

	/**
	 * Waits until {@code condition} holds for the drainer's activity (e.g. {@link DrainActivity#idle()}),
	 * woken by the drainer's own progress: claim loops that start or end, runs that start, finishes
	 * written. Idle at one instant is not idle for ever: a sweep may find work that became due.
	 * @return whether it held before {@code timeout} passed
	 */
	public boolean awaitDrain(Predicate<DrainActivity> condition, Duration timeout) {
		if (this.drainer == null) {
			return condition.test(DrainActivity.IDLE);
		}
		return this.drainer.await(condition, timeout);
	}

	/**
	 * Runs {@code listener} whenever the drainer's activity changes (a claim loop starts or ends, a run
	 * starts, finishes are written), on the drainer's threads: it must return at once. For waits of
	 * their own, such as the test kit's.
	 */
	public void onDrainProgress(Runnable listener) {
		if (this.drainer != null) {
			this.drainer.onProgress(listener);
		}
	}

	/**
	 * The work of this server's consumers not done yet (units, cursors behind their target, dead ones)
	 * and the scheduled tasks of its contracts, soonest runnable first, dead letters last.
	 */
	public List<WorkStore.Upcoming> upcomingWork(int limit) {
		return requireWork().upcoming(consumerRefs(), this.contracts.keySet(), limit);
	}

	/**
	 * When work next becomes due after now, by this server's clock: a back-off that ends, a lease
	 * that lapses, a scheduled task; empty when nothing waits for a time (work due now included).
	 */
	public Optional<Instant> nextDue() {
		Instant now = this.clock.instant();
		return upcomingWork(1000).stream()
			.map(WorkStore.Upcoming::runnableAt)
			.filter((at) -> at != null && at.isAfter(now))
			.min(Instant::compareTo);
	}

	private List<WorkStore.ConsumerRef> consumerRefs() {
		return consumers().stream().map((c) -> new WorkStore.ConsumerRef(c.contract(), c.name())).toList();
	}

	/** Deletes expired presence, at most once per TTL: readers hide it already, this keeps the table small. */
	private void sweepPresence() {
		Instant now = this.clock.instant();
		if (this.presence == null || now.isBefore(this.presenceSweptAt.plus(this.presenceTtl))) {
			return;
		}
		this.presenceSweptAt = now;
		try {
			this.presence.deleteExpired(now);
		}
		catch (RuntimeException ex) {
			// the next sweep after a TTL tries again
		}
	}

	/**
	 * Dead-lettered units, newest first. A contract this server does not register is listed by its
	 * name while the store holds dead letters of it (so a removed contract's can be found and skipped);
	 * a name with none at all is {@code UNKNOWN_CONTRACT}, as for a session's events, rather than an
	 * empty list that reads as "nothing is dead" for a misspelt name. A consumer likewise: one no instance
	 * has run (on the contract, or on any when none is named) and the store holds no dead letters of is
	 * {@code NOT_FOUND}, naming the consumers there are.
	 * @param contract, session, consumer filters, {@code null} for any
	 */
	public List<DeadLetter> deadLetters(@Nullable String contract, @Nullable String session, @Nullable String consumer,
			int limit) {
		List<DeadLetter> dead = requireWork().deadLetters(contract, session, consumer, limit);
		if (contract != null && dead.isEmpty() && !this.contracts.containsKey(contract)
				&& (session == null && consumer == null || requireWork().deadLetters(contract, null, null, 1).isEmpty())) {
			contract(contract);
		}
		if (consumer != null && dead.isEmpty() && !registers(contract, consumer)
				&& (session == null || requireWork().deadLetters(contract, null, consumer, 1).isEmpty())) {
			List<String> known = consumerNames(contract);
			if (!known.contains(consumer)) {
				throw new A2Exception(ErrorCode.NOT_FOUND, "no consumer named '" + consumer + "' is known"
						+ ((contract != null) ? " on contract '" + contract + "'" : "") + " and no dead letters of it are stored; "
						+ "the consumers: " + (known.isEmpty() ? "none" : String.join(", ", known)));
			}
		}
		return dead.stream().map(this::withFixedLane).toList();
	}

	/** Whether this server registers a consumer of that name, on the contract (on any when {@code null}). */
	private boolean registers(@Nullable String contract, String name) {
		return (contract != null) ? consumer(contract, name) != null
				: this.consumers.values().stream().anyMatch((byName) -> byName.containsKey(name));
	}

	/**
	 * The names of the contract's consumers (of every contract's when {@code null}), sorted: those this
	 * server registers and those any instance recorded when its drainer started (an instance that reads
	 * dead letters may run none of them).
	 */
	private List<String> consumerNames(@Nullable String contract) {
		Set<String> names = new TreeSet<>();
		this.consumers.forEach((byContract, byName) -> {
			if (contract == null || byContract.equals(contract)) {
				names.addAll(byName.keySet());
			}
		});
		requireWork().recordedConsumers(contract).forEach((recorded) -> names.add(recorded.consumer()));
		return List.copyOf(names);
	}

	private DeadLetter withFixedLane(DeadLetter dead) {
		Consumer consumer = consumer(dead.contract(), dead.consumer());
		if (consumer != null && consumer.lane() instanceof Lane.Fixed fixed) {
			return new DeadLetter(dead.contract(), dead.session(), dead.consumer(), fixed.name(), dead.index(), dead.eventId(),
					dead.eventType(), dead.attempts(), dead.failures(), dead.lastError(), dead.failedAt());
		}
		return dead;
	}

	/**
	 * An operator's decision on a dead letter: {@code retry} makes it runnable again with a fresh
	 * failure count; {@code skip} marks it done without running it and unblocks its lane.
	 * A consumer this server does not register (one removed from the application, whose dead letters
	 * stay) can only be skipped: that discards its dead letter.
	 * A contract this server does not register likewise: a skip discards the dead letters the store still
	 * holds of it.
	 * @return whether there was such a dead letter
	 * @throws A2Exception {@code UNKNOWN_CONTRACT} for a contract it does not register (on a skip, one of
	 *     which no such dead letter is stored),
	 *     {@code INVALID_PAYLOAD} for a session id that breaks §4, a {@code null} consumer or action, an index
	 *     below 1, or for a retry of a consumer it does not register (no consumer would run it)
	 */
	public boolean redrive(String contract, String session, String consumer, long index, RedriveAction action) {
		// checked before the observation: its contract and consumer tag timers, so a name the caller made
		// up (a typo, a scan) must never make a timer of its own
		Contract known = (contract != null) ? this.contracts.get(contract) : null;
		if (known == null && action != RedriveAction.SKIP) {
			known = contract(contract); // throws: no such contract
		}
		String sessionId = SessionIds.check(session);
		if (consumer == null || action == null) {
			// a null action must not fall through to the skip below, which discards a dead letter
			throw A2Exception.invalid("a redrive names its consumer and its action (retry or skip); consumer was "
					+ ((consumer == null) ? "null" : "'" + consumer + "'") + ", action " + action);
		}
		if (index < 1) {
			// as a history read's after: a number no event can have is a mistake, not a dead letter not found
			throw A2Exception.invalid("index must be 1 or more (a session's events are numbered from 1), was " + index);
		}
		if (known == null) {
			// a contract removed from the application: its dead letters are still listed and counted, so a
			// skip discards them as it does a removed consumer's; a name without any is no contract (404)
			if (requireWork().redrive(contract, sessionId, consumer, index, false)) {
				return true;
			}
			known = contract(contract); // throws: no such contract
		}
		if (consumer(known.name(), consumer) == null) {
			if (action == RedriveAction.RETRY) {
				List<String> names = consumerNames(known.name());
				if (!names.contains(consumer) && requireWork().deadLetters(known.name(), null, consumer, 1).isEmpty()) {
					// a misspelt name: "retry it from an instance that registers it" would send the operator looking
					throw new A2Exception(ErrorCode.NOT_FOUND, "no consumer named '" + consumer + "' is known on contract '"
							+ known.name() + "' and no dead letters of it are stored; the consumers: "
							+ (names.isEmpty() ? "none" : String.join(", ", names)));
				}
				throw A2Exception.invalid("consumer '" + consumer + "' is not registered in contract '" + known.name()
						+ "' on this instance: no consumer would run a retry of its dead letter. Skip it to discard it, "
						+ "or retry it from an instance that registers the consumer");
			}
			// a consumer removed from the application: its dead letters would otherwise stay for ever (and be
			// reported as such). Not observed: the timer's consumer tag would be a name no consumer has
			return requireWork().redrive(known.name(), sessionId, consumer, index, false);
		}
		// the outcome is what happened: a redrive that found no dead letter, tagged with its action, would
		// count as one done, and a script redriving wrong indexes would look healthy on a dashboard
		Observation observation = Observation.createNotStarted(A2Observations.REDRIVE, this.observations)
			.lowCardinalityKeyValue(A2Observations.CONTRACT, contract)
			.lowCardinalityKeyValue(A2Observations.CONSUMER, consumer)
			.lowCardinalityKeyValue(A2Observations.OUTCOME, "none")
			.highCardinalityKeyValue(A2Observations.SESSION, sessionId)
			.highCardinalityKeyValue(A2Observations.EVENT_INDEX, Long.toString(index))
			.start();
		boolean redriven;
		try (Observation.Scope scope = observation.openScope()) {
			redriven = requireWork().redrive(contract, sessionId, consumer, index, action == RedriveAction.RETRY);
			if (redriven) {
				observation.lowCardinalityKeyValue(A2Observations.OUTCOME, action.name().toLowerCase(java.util.Locale.ROOT));
			}
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			throw ex;
		}
		finally {
			observation.stop();
		}
		if (redriven && this.drainer != null) {
			this.drainer.request(contract, session);
		}
		return redriven;
	}

	/** Units not done per consumer: pending, dead, and the creation time of the oldest pending event. */
	public List<WorkStore.PendingWork> pendingWork() {
		return requireWork().pending();
	}

	/** Reads from the store, so that a health check fails when PostgreSQL cannot be reached. */
	public void checkStore() {
		this.events.head("", "");
	}

	/** Whether this server runs consumers. */
	public boolean drains() {
		return this.drainer != null;
	}

	/**
	 * Stops running consumers: no new claims, running attempts get the stop grace to finish, the
	 * rest are aborted and their claims released so another instance takes them at once.
	 */
	@Override
	public void close() {
		this.closed = true;
		if (this.drainer != null) {
			this.drainer.stop(this.stopGrace);
		}
	}

	/** Stops at once without finishing or releasing anything, as a crash would. For tests. */
	void halt() {
		if (this.drainer != null) {
			this.drainer.halt();
		}
	}

	Drainer drainer() {
		if (this.drainer == null) {
			throw new IllegalStateException("this A2Server has no consumers (or no work store) to drive");
		}
		return this.drainer;
	}

	@Nullable Drainer drainerIfAny() {
		return this.drainer;
	}

	private WorkStore requireWork() {
		if (this.work == null) {
			throw new IllegalStateException("this A2Server has no work store; build it with a DataSource or a WorkStore");
		}
		return this.work;
	}

	/**
	 * Delivers a due scheduled task, in the transaction that took it. That transaction holds the
	 * session's row, so the head read here stays the session's head until the delivery commits.
	 */
	void deliver(ScheduledTask task) {
		Session session = session(task.contract(), task.session());
		SessionHead head = this.events.head(task.contract(), task.session());
		if (head.clearIndex() != task.clearIndex()) {
			return;
		}
		if (task.events() == null) {
			// a clear whose condition fails is dropped
			if (task.ifLastIndex() == null) {
				session.clear();
			}
			else if (head.lastIndex() == task.ifLastIndex()) {
				session.clear(task.ifLastIndex());
			}
			return;
		}
		session.append(this.payloads.readScheduled(task.events()), null, true);
	}

	private static Map<String, Map<String, Consumer>> checkedConsumers(List<Consumer> consumers,
			Map<String, Contract> contracts) {
		Map<String, Map<String, Consumer>> byContract = new LinkedHashMap<>();
		for (Consumer consumer : consumers) {
			Contract contract = contracts.get(consumer.contract());
			if (contract == null) {
				throw new IllegalArgumentException("consumer '" + consumer.name() + "' reads contract '" + consumer.contract()
						+ "', which is not registered; registered: " + contracts.keySet());
			}
			consumer.check(contract);
			Map<String, Consumer> byName = byContract.computeIfAbsent(consumer.contract(), (c) -> new LinkedHashMap<>());
			if (byName.putIfAbsent(consumer.name(), consumer) != null) {
				throw new IllegalArgumentException("contract '" + consumer.contract() + "' has two consumers named '"
						+ consumer.name() + "'; consumer names must be unique in a contract");
			}
		}
		return byContract;
	}

	/** Builds an {@link A2Server}. */
	public static final class Builder {

		private final Map<String, Contract> contracts = new LinkedHashMap<>();

		private final List<Consumer> consumers = new ArrayList<>();

		private @Nullable DataSource dataSource;

		private @Nullable PlatformTransactionManager transactionManager;

		private @Nullable EventStore eventStore;

		private @Nullable SnapshotStore snapshotStore;

		private @Nullable WorkStore workStore;

		private @Nullable PresenceStore presenceStore;

		private Duration presenceTtl = Duration.ofSeconds(60);

		private JsonMapper jsonMapper = JsonMapper.builder().build();

		private @Nullable PayloadValidator payloadValidator;

		private int snapshotEvery = 100;

		private int stateCacheSize = 10_000;

		private DrainSettings drain = DrainSettings.DEFAULTS;

		private Clock clock = Clock.systemUTC();

		private Duration stopGrace = Duration.ofSeconds(10);

		private boolean runConsumers = true;

		private boolean clockSet;

		private DrainScheduling scheduling = DrainScheduling.AUTOMATIC;

		private final List<RunInterceptor> interceptors = new ArrayList<>();

		private ObservationRegistry observations = ObservationRegistry.NOOP;

		private SessionChanges changes = SessionChanges.local();

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

		/** Registers a consumer of a registered contract; names are unique per contract. */
		public Builder consumer(Consumer consumer) {
			this.consumers.add(Objects.requireNonNull(consumer, "consumer"));
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

		/** A store of events of one's own instead of the PostgreSQL store of the data source. */
		public Builder eventStore(EventStore eventStore) {
			this.eventStore = eventStore;
			return this;
		}

		/** A store of state snapshots of one's own instead of the PostgreSQL store of the data source. */
		public Builder snapshotStore(SnapshotStore snapshotStore) {
			this.snapshotStore = snapshotStore;
			return this;
		}

		/** A store of consumer work of one's own instead of the PostgreSQL store of the data source. */
		public Builder workStore(WorkStore workStore) {
			this.workStore = workStore;
			return this;
		}

		/** A store of presence of one's own instead of the PostgreSQL store of the data source. */
		public Builder presenceStore(PresenceStore presenceStore) {
			this.presenceStore = presenceStore;
			return this;
		}

		/** How long a participant's presence lasts without a write; 60 s by default. */
		public Builder presenceTtl(Duration presenceTtl) {
			this.presenceTtl = Objects.requireNonNull(presenceTtl, "presenceTtl");
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

		/** How consumers are run. */
		public Builder drain(DrainSettings drain) {
			this.drain = Objects.requireNonNull(drain, "drain");
			return this;
		}

		/**
		 * The clock of leases, back-offs, schedules and presence; also of the events' {@code createdAt}
		 * when the stores are built here from a {@link #dataSource(DataSource) DataSource} (otherwise the
		 * database's clock stamps them).
		 */
		public Builder clock(Clock clock) {
			this.clock = Objects.requireNonNull(clock, "clock");
			this.clockSet = true;
			return this;
		}

		/** Whether heartbeats run on the drainer's own timer (the default) or only when called. */
		public Builder drainScheduling(DrainScheduling scheduling) {
			this.scheduling = Objects.requireNonNull(scheduling, "scheduling");
			return this;
		}

		/** Wraps every run of a consumer's code; interceptors added first are outermost. */
		public Builder runInterceptor(RunInterceptor interceptor) {
			this.interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
			return this;
		}

		/**
		 * Whether this instance runs the consumers (true by default). An instance that does not still
		 * creates their work when it appends, for the instances that do.
		 */
		public Builder runConsumers(boolean runConsumers) {
			this.runConsumers = runConsumers;
			return this;
		}

		/** Where A2 records its observations ({@link A2Observations}); none by default. */
		public Builder observationRegistry(ObservationRegistry observations) {
			this.observations = Objects.requireNonNull(observations, "observations");
			return this;
		}

		/**
		 * Where changes of sessions are told, and heard from other instances: this instance's only by
		 * default; a {@link dev.a2.store.postgres.PostgresSessionChanges} shares them between instances.
		 */
		public Builder sessionChanges(SessionChanges changes) {
			this.changes = Objects.requireNonNull(changes, "changes");
			return this;
		}

		/** How long {@link A2Server#close()} lets running attempts finish; 10 s by default. */
		public Builder stopGrace(Duration stopGrace) {
			this.stopGrace = Objects.requireNonNull(stopGrace, "stopGrace");
			return this;
		}

		/** The server; it starts draining its consumers at once unless {@link #runConsumers(boolean)} said no. */
		public A2Server build() {
			if (this.contracts.isEmpty()) {
				throw new IllegalStateException("an A2Server needs at least one contract");
			}
			EventStore events = this.eventStore;
			SnapshotStore snapshots = this.snapshotStore;
			WorkStore work = this.workStore;
			PresenceStore presence = this.presenceStore;
			// what spans stores (a clear and the work it ends, a push and its presence) is one transaction
			TransactionOperations transactions = (this.transactionManager != null)
					? new StoreTransactionTemplate(this.transactionManager) : TransactionOperations.withoutTransaction();
			TransactionOperations separateTransactions = (this.transactionManager != null)
					? separate(this.transactionManager) : TransactionOperations.withoutTransaction();
			DataSource dataSource = this.dataSource;
			if (dataSource != null) {
				PlatformTransactionManager transactionManager = (this.transactionManager != null) ? this.transactionManager
						: new DataSourceTransactionManager(dataSource);
				transactions = new StoreTransactionTemplate(transactionManager);
				separateTransactions = separate(transactionManager);
				if (events == null) {
					events = new PostgresEventStore(dataSource, transactionManager, this.clockSet ? this.clock : null);
				}
				if (snapshots == null) {
					snapshots = new PostgresSnapshotStore(dataSource, transactionManager);
				}
				if (work == null) {
					work = new PostgresWorkStore(dataSource, transactionManager, events, this.drain.maxFailures(),
							this.drain.cursorBatch());
				}
				if (presence == null) {
					presence = new PostgresPresenceStore(dataSource, transactionManager);
				}
			}
			if (events == null || snapshots == null) {
				throw new IllegalStateException("an A2Server needs a DataSource (or an EventStore and a SnapshotStore)");
			}
			return new A2Server(this, events, snapshots, work, presence, transactions, separateTransactions);
		}

		private static TransactionTemplate separate(PlatformTransactionManager transactionManager) {
			TransactionTemplate template = new StoreTransactionTemplate(transactionManager);
			template.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
			return template;
		}

	}

}
