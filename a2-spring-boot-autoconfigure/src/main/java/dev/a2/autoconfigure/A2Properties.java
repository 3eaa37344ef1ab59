package dev.a2.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.a2.DrainScheduling;
import dev.a2.DrainSettings;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of A2, under {@code a2.*}. Values that cannot work fail the start-up, each named with
 * what it must be.
 */
@ConfigurationProperties("a2")
public class A2Properties implements InitializingBean {

	private final Store store = new Store();

	private final State state = new State();

	private final Drain drain = new Drain();

	private final Web web = new Web();

	private final Presence presence = new Presence();

	private final Console console = new Console();

	private final Security security = new Security();

	private final Ai ai = new Ai();

	/**
	 * Refuses, once bound, the times and counts that cannot work (a sweep interval of 0 fails deep in a
	 * scheduler without naming the setting; a negative presence TTL makes every presence write vanish at
	 * once), naming each property, its value and what it must be.
	 */
	@Override
	public void afterPropertiesSet() {
		new PropertyChecks().atLeast("a2.store.append-rounds", this.store.appendRounds, 1)
			.atLeast("a2.state.snapshot-every", this.state.snapshotEvery, 1)
			// 0 keeps no state in memory: every read folds from the latest snapshot
			.atLeast("a2.state.cache-size", this.state.cacheSize, 0)
			.positive("a2.drain.lease", this.drain.lease)
			.atLeast("a2.drain.concurrency", this.drain.concurrency, 1)
			.atLeast("a2.drain.claim-batch", this.drain.claimBatch, 1)
			// 0 retries at once
			.notNegative("a2.drain.retry-base", this.drain.retryBase)
			.notNegative("a2.drain.retry-max", this.drain.retryMax)
			// under the first back-off, every back-off would be the longest: the doubling never happens
			.noShorter("a2.drain.retry-max", this.drain.retryMax, "a2.drain.retry-base", this.drain.retryBase)
			.atLeast("a2.drain.max-failures", this.drain.maxFailures, 1)
			.positive("a2.drain.sweep-interval", this.drain.sweepInterval)
			.atLeast("a2.drain.sweep-batch", this.drain.sweepBatch, 1)
			.atLeast("a2.drain.cursor-batch", this.drain.cursorBatch, 1)
			// 0 aborts running attempts at once on shutdown
			.notNegative("a2.drain.stop-grace", this.drain.stopGrace)
			.positive("a2.presence.ttl", this.presence.ttl)
			.positive("a2.web.ping", this.web.ping)
			.bodySize("a2.web.max-push-bytes", this.web.maxPushBytes)
			.atLeast("a2.web.max-events-per-push", this.web.maxEventsPerPush, 1)
			.atLeast("a2.web.max-json-depth", this.web.maxJsonDepth, 1)
			.atLeast("a2.web.max-string-length", this.web.maxStringLength, 1)
			.atLeast("a2.web.max-subscriptions-per-socket", this.web.maxSubscriptionsPerSocket, 1)
			.atLeast("a2.web.store-threads", this.web.storeThreads, 1)
			.positive("a2.web.poll", this.web.poll)
			// 0 never asks the authorizer again about an open stream
			.notNegative("a2.web.reauthorize-every", this.web.reauthorizeEvery)
			.positive("a2.ai.flush-interval", this.ai.flushInterval)
			.atLeast("a2.ai.flush-tokens", this.ai.flushTokens, 1)
			.atLeast("a2.ai.max-steps", this.ai.maxSteps, 1)
			// empty, no one could operate (every operator refused), and the assistant's status had no writer
			.notBlank("a2.security.operator-authority", this.security.operatorAuthority)
			.notBlank("a2.ai.participant", this.ai.participant)
			.throwIfWrong();
	}

	public Store getStore() {
		return this.store;
	}

	public State getState() {
		return this.state;
	}

	public Drain getDrain() {
		return this.drain;
	}

	public Web getWeb() {
		return this.web;
	}

	public Presence getPresence() {
		return this.presence;
	}

	public Console getConsole() {
		return this.console;
	}

	public Security getSecurity() {
		return this.security;
	}

	public static class Security {

		/**
		 * The authority a caller needs to operate A2 (the {@code a2} actuator endpoint and its console:
		 * a session's events, redrive, the overview and dead letters) under the default authorizer that
		 * applies when Spring Security is present and the application defines no {@code A2Authorizer}.
		 * Authenticated callers without it may still read, push, write presence and clear.
		 */
		private String operatorAuthority = "ROLE_A2_OPERATOR";

		public String getOperatorAuthority() {
			return this.operatorAuthority;
		}

		public void setOperatorAuthority(String operatorAuthority) {
			this.operatorAuthority = operatorAuthority;
		}

	}

	public Ai getAi() {
		return this.ai;
	}

	public static class Ai {

		/**
		 * The longest a streamed token of a model's reply waits before it is appended as a
		 * {@code reply.delta} event. The first token of a reply is appended at once.
		 */
		private Duration flushInterval = Duration.ofMillis(50);

		/**
		 * Appends a {@code reply.delta} at once when this many chunks of the model's stream are
		 * waiting, however short the wait so far.
		 */
		private int flushTokens = 64;

		/**
		 * The presence participant whose {@code ai.status} field shows the assistant's activity
		 * ({@code thinking}, {@code streaming}, {@code idle}).
		 */
		private String participant = "assistant";

		/** The most model calls one run makes; each round of tool calls is one more. */
		private int maxSteps = 8;

		public Duration getFlushInterval() {
			return this.flushInterval;
		}

		public void setFlushInterval(Duration flushInterval) {
			this.flushInterval = flushInterval;
		}

		public int getFlushTokens() {
			return this.flushTokens;
		}

		public void setFlushTokens(int flushTokens) {
			this.flushTokens = flushTokens;
		}

		public String getParticipant() {
			return this.participant;
		}

		public void setParticipant(String participant) {
			this.participant = participant;
		}

		public int getMaxSteps() {
			return this.maxSteps;
		}

		public void setMaxSteps(int maxSteps) {
			this.maxSteps = maxSteps;
		}

	}

	public static class Console {

		/**
		 * Whether the actuator's {@code a2} endpoint serves the operator console at
		 * {@code /actuator/a2/console}: consumers and their lag, dead letters with retry and skip, a
		 * session's events live. It is exposed and secured like the endpoint.
		 */
		private boolean enabled;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	public static class Presence {

		/**
		 * How long a participant's presence lasts after its latest write; then its fields expire (a
		 * patch like any other).
		 */
		private Duration ttl = Duration.ofSeconds(60);

		public Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(Duration ttl) {
			this.ttl = ttl;
		}

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

		/**
		 * On a Citus coordinator, whether the migration that creates A2's tables distributes
		 * them by session_id, colocated with a2_session (the shard count is Citus's,
		 * citus.shard_count, left to the operator). Read once, when that migration runs; no
		 * effect on plain PostgreSQL.
		 */
		private boolean distribute = true;

		/**
		 * How many group-commit rounds of appends may run at once on plain PostgreSQL, each
		 * one statement on a connection of its own (so one backend). More keep a database
		 * with many cores busy under a heavy append load; fewer make larger rounds, which
		 * cost less CPU per event where the database shares a few cores with the
		 * application. At least 1. On Citus each session has rounds of its own, one at a time.
		 */
		private int appendRounds = 4;

		public int getAppendRounds() {
			return this.appendRounds;
		}

		public void setAppendRounds(int appendRounds) {
			this.appendRounds = appendRounds;
		}

		public boolean isDistribute() {
			return this.distribute;
		}

		public void setDistribute(boolean distribute) {
			this.distribute = distribute;
		}

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
		 * How many (session, reducer) states each instance keeps in memory; 0 keeps none. A state read
		 * inside a transaction is not kept: the transaction may roll back what it folded.
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

	public static class Drain {

		/**
		 * Whether this instance runs the consumers. An instance that does not still creates their
		 * work when it appends, for the instances that do.
		 */
		private boolean enabled = true;

		/**
		 * How long a claim holds before another instance may take the unit over; running attempts
		 * renew it every third of it. The claims of an instance PostgreSQL sees gone (its process
		 * died, its connection dropped) are taken over at the next sweep without waiting for it.
		 */
		private Duration lease = Duration.ofSeconds(30);

		/**
		 * The most consumer runs at once on this instance.
		 */
		private int concurrency = 64;

		/**
		 * The most units claimed in one round trip.
		 */
		private int claimBatch = 32;

		/**
		 * The back-off after a unit's first failure; it doubles with each failure. 0 retries at once.
		 */
		private Duration retryBase = Duration.ofSeconds(1);

		/**
		 * The longest back-off between failures; no shorter than {@code a2.drain.retry-base}.
		 */
		private Duration retryMax = Duration.ofMinutes(5);

		/**
		 * Failures (and attempts that never finished) after which a unit is dead-lettered.
		 */
		private int maxFailures = 10;

		/**
		 * How often the sweep looks across the database for due work: lapsed leases, claims of
		 * instances that are gone, passed back-offs, unclaimed units, backfills and scheduled tasks.
		 */
		private Duration sweepInterval = Duration.ofSeconds(1);

		/**
		 * The most sessions with due work one sweep starts draining, and the most sessions one
		 * sweep looks at for each backfilling consumer (the sweeps go on where the last stopped).
		 */
		private int sweepBatch = 1000;

		/**
		 * The most events one claim of a fixed-lane (cursor) consumer runs in order and completes
		 * with one finish; a failure keeps the events before it.
		 */
		private int cursorBatch = 256;

		/**
		 * On shutdown, how long running attempts may finish before they are aborted and their
		 * claims released for another instance; 0 aborts them at once.
		 */
		private Duration stopGrace = Duration.ofSeconds(10);

		/**
		 * What keeps the drainer going between appends: its own timers (heartbeats, and the sweep
		 * every sweep interval), or nothing but calls of the application ({@code manual}: tests on a
		 * clock of their own, such as the test kit's).
		 */
		private DrainScheduling scheduling = DrainScheduling.AUTOMATIC;

		/**
		 * The consumers to register, by name ({@code contract/name} where names repeat across
		 * contracts); empty for all. Consumers left out neither run nor get work. A name no consumer
		 * of the application has fails the start-up. For tests of some of an application's consumers
		 * (the test kit's {@code @A2Test(consumers = ...)} sets it).
		 */
		private List<String> consumers = new ArrayList<>();

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getLease() {
			return this.lease;
		}

		public void setLease(Duration lease) {
			this.lease = lease;
		}

		public int getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(int concurrency) {
			this.concurrency = concurrency;
		}

		public int getClaimBatch() {
			return this.claimBatch;
		}

		public void setClaimBatch(int claimBatch) {
			this.claimBatch = claimBatch;
		}

		public Duration getRetryBase() {
			return this.retryBase;
		}

		public void setRetryBase(Duration retryBase) {
			this.retryBase = retryBase;
		}

		public Duration getRetryMax() {
			return this.retryMax;
		}

		public void setRetryMax(Duration retryMax) {
			this.retryMax = retryMax;
		}

		public int getMaxFailures() {
			return this.maxFailures;
		}

		public void setMaxFailures(int maxFailures) {
			this.maxFailures = maxFailures;
		}

		public Duration getSweepInterval() {
			return this.sweepInterval;
		}

		public void setSweepInterval(Duration sweepInterval) {
			this.sweepInterval = sweepInterval;
		}

		public int getSweepBatch() {
			return this.sweepBatch;
		}

		public void setSweepBatch(int sweepBatch) {
			this.sweepBatch = sweepBatch;
		}

		public int getCursorBatch() {
			return this.cursorBatch;
		}

		public void setCursorBatch(int cursorBatch) {
			this.cursorBatch = cursorBatch;
		}

		public Duration getStopGrace() {
			return this.stopGrace;
		}

		public void setStopGrace(Duration stopGrace) {
			this.stopGrace = stopGrace;
		}

		public DrainScheduling getScheduling() {
			return this.scheduling;
		}

		public void setScheduling(DrainScheduling scheduling) {
			this.scheduling = scheduling;
		}

		public List<String> getConsumers() {
			return this.consumers;
		}

		public void setConsumers(List<String> consumers) {
			this.consumers = consumers;
		}

		/** Whether the consumer is one to register: {@link #getConsumers()} is empty or names it. */
		public boolean registers(dev.a2.Consumer consumer) {
			return this.consumers.isEmpty() || this.consumers.stream().anyMatch((named) -> names(named, consumer));
		}

		/** Whether {@code named}, an entry of {@link #getConsumers()}, is the consumer's name or its {@code contract/name}. */
		private static boolean names(String named, dev.a2.Consumer consumer) {
			return named.equals(consumer.name()) || named.equals(consumer.contract() + "/" + consumer.name());
		}

		/**
		 * Fails when {@link #getConsumers() consumers} names one the application does not have: a typo there
		 * would otherwise leave every consumer unregistered, an instance that starts and runs nothing.
		 */
		void checkNamed(List<dev.a2.Consumer> all) {
			List<String> unknown = this.consumers.stream()
				.filter((named) -> all.stream().noneMatch((consumer) -> names(named, consumer)))
				.toList();
			if (!unknown.isEmpty()) {
				throw new A2PropertiesException(List.of("a2.drain.consumers must name consumers of this application "
						+ "(" + String.join(", ",
								all.stream().map((consumer) -> consumer.contract() + "/" + consumer.name()).toList())
						+ "), was " + String.join(",", this.consumers) + ": no consumer is named "
						+ String.join(", ", unknown)));
			}
		}

		/** The drainer's settings. */
		public DrainSettings toSettings() {
			return new DrainSettings(this.lease, this.lease.dividedBy(3), this.concurrency, this.claimBatch, this.retryBase,
					this.retryMax, this.maxFailures, this.sweepBatch, this.cursorBatch);
		}

	}


	/** As whom a caller may write presence. */
	public enum PresenceParticipant {

		/** A caller with a name only as the participant of that name. */
		CALLER,

		/** Any participant: the authorizer decides. */
		ANY

	}

	public static class Web {

		/**
		 * Whether A2's HTTP, SSE and WebSocket endpoints are served (by a WebFlux application, or as a
		 * servlet at the base path of a Spring MVC one).
		 */
		private boolean enabled = true;

		/**
		 * Where A2's endpoints live: {@code <base-path>/{contract}/sessions/{session}/…} and
		 * {@code <base-path>/{contract}/socket}.
		 */
		private String basePath = "/a2";

		/**
		 * How often an idle stream or socket is pinged, so proxies keep it open and dead clients show. On Jetty keep it under 30 s: Jetty closes a socket idle for 30 s (1001).
		 */
		private Duration ping = Duration.ofSeconds(15);

		/**
		 * Origins ({@code scheme://host[:port]}) or patterns of them ({@code https://*.example.com},
		 * {@code http://localhost:*}) a WebSocket handshake may come from besides the server's own
		 * origin; {@code *} allows every origin. Empty: the same origin only. One no page could have
		 * ({@code example.com} without its scheme, a path) stops the start-up. A port list
		 * ({@code http://localhost:[8080,8081]}) must be an item of its own,
		 * {@code a2.web.allowed-origins[0]=…}: a comma-separated value is split at every comma.
		 */
		private List<String> allowedOrigins = new ArrayList<>();

		/**
		 * The largest push body or socket frame; larger ones answer PAYLOAD_TOO_LARGE.
		 */
		private DataSize maxPushBytes = DataSize.ofKilobytes(256);

		/**
		 * The most events one push may carry.
		 */
		private int maxEventsPerPush = 100;

		/**
		 * The deepest JSON nesting a body or frame may have.
		 */
		private int maxJsonDepth = 32;

		/**
		 * The longest JSON string (or number) a body or frame may hold, in characters.
		 */
		private int maxStringLength = 65536;

		/**
		 * How many sessions one socket may follow at once.
		 */
		private int maxSubscriptionsPerSocket = 100;

		/**
		 * Threads that run the endpoints' store calls (JDBC blocks, so never on an event loop). In a Spring MVC
		 * application a push runs on the container's thread instead.
		 */
		private int storeThreads = 32;

		/**
		 * How often streams read again while changes of other instances may not arrive (the
		 * LISTEN connection is down); they also read every ten times this, always.
		 */
		private Duration poll = Duration.ofSeconds(1);

		/**
		 * As whom a caller may write presence, alone or beside a push: {@code caller} (a caller with a
		 * name writes only as the participant of that name, else FORBIDDEN) or {@code any} (any
		 * participant; the A2Authorizer, which sees the write, decides).
		 */
		private PresenceParticipant presenceParticipant = PresenceParticipant.CALLER;

		/**
		 * How often an open SSE stream or socket subscription asks the A2Authorizer again whether its
		 * caller may still read its session; one it may no longer read ends (the client's reconnect, or
		 * subscription, is then refused with FORBIDDEN). Each stream asks at a moment of its own within
		 * the interval, one authorizer call per stream per interval; an authorizer that throws leaves the
		 * stream open (logged at WARN). 0 never asks again: a caller the authorizer stops allowing reads
		 * on until the connection ends.
		 */
		private Duration reauthorizeEvery = Duration.ofMinutes(1);

		public Duration getReauthorizeEvery() {
			return this.reauthorizeEvery;
		}

		public void setReauthorizeEvery(Duration reauthorizeEvery) {
			this.reauthorizeEvery = reauthorizeEvery;
		}

		public PresenceParticipant getPresenceParticipant() {
			return this.presenceParticipant;
		}

		public void setPresenceParticipant(PresenceParticipant presenceParticipant) {
			this.presenceParticipant = presenceParticipant;
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public String getBasePath() {
			return this.basePath;
		}

		public void setBasePath(String basePath) {
			this.basePath = basePath;
		}

		public Duration getPing() {
			return this.ping;
		}

		public void setPing(Duration ping) {
			this.ping = ping;
		}

		public List<String> getAllowedOrigins() {
			return this.allowedOrigins;
		}

		public void setAllowedOrigins(List<String> allowedOrigins) {
			this.allowedOrigins = allowedOrigins;
		}

		public DataSize getMaxPushBytes() {
			return this.maxPushBytes;
		}

		public void setMaxPushBytes(DataSize maxPushBytes) {
			this.maxPushBytes = maxPushBytes;
		}

		public int getMaxEventsPerPush() {
			return this.maxEventsPerPush;
		}

		public void setMaxEventsPerPush(int maxEventsPerPush) {
			this.maxEventsPerPush = maxEventsPerPush;
		}

		public int getMaxJsonDepth() {
			return this.maxJsonDepth;
		}

		public void setMaxJsonDepth(int maxJsonDepth) {
			this.maxJsonDepth = maxJsonDepth;
		}

		public int getMaxStringLength() {
			return this.maxStringLength;
		}

		public void setMaxStringLength(int maxStringLength) {
			this.maxStringLength = maxStringLength;
		}

		public int getMaxSubscriptionsPerSocket() {
			return this.maxSubscriptionsPerSocket;
		}

		public void setMaxSubscriptionsPerSocket(int maxSubscriptionsPerSocket) {
			this.maxSubscriptionsPerSocket = maxSubscriptionsPerSocket;
		}

		public int getStoreThreads() {
			return this.storeThreads;
		}

		public void setStoreThreads(int storeThreads) {
			this.storeThreads = storeThreads;
		}

		public Duration getPoll() {
			return this.poll;
		}

		public void setPoll(Duration poll) {
			this.poll = poll;
		}

	}

}
