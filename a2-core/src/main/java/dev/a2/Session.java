package dev.a2;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import dev.a2.drain.AppendLeases;
import dev.a2.drain.Drainer;
import dev.a2.live.SessionChange;
import dev.a2.presence.PresenceRules;
import dev.a2.store.EventToStore;
import dev.a2.store.PresenceStore;
import dev.a2.store.StorableText;
import dev.a2.store.StoredEvent;
import dev.a2.store.StoreFailures;
import dev.a2.store.StoredPage;
import dev.a2.store.WorkStore;
import dev.a2.store.WorkUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * One session of a contract: an append-only log of events, keyed by the session id. Obtained from
 * {@link A2Server#session(String, String)}; cheap to create, safe to share between threads.
 */
public final class Session {

	private static final Log logger = LogFactory.getLog(Session.class);

	/** The largest page {@link #history(long, int)} answers. */
	public static final int MAX_HISTORY_LIMIT = 1000;

	private static final int MAX_ID_LENGTH = 256;

	private final A2Server server;

	private final Contract contract;

	private final String id;

	Session(A2Server server, Contract contract, String id) {
		this.server = server;
		this.contract = contract;
		this.id = id;
	}

	/** The session id. */
	public String id() {
		return this.id;
	}

	/** The contract the session belongs to. */
	public Contract contract() {
		return this.contract;
	}

	/** Appends events; see {@link #append(List)}. */
	public List<Event> append(NewEvent... events) {
		return append(Arrays.asList(events));
	}

	/**
	 * Appends a batch: all of it or nothing. An event whose id the session already has is not
	 * appended again, and the stored one answers in its place, so a retried append is safe.
	 * @return the stored events, in the order given
	 * @throws A2Exception {@code INVALID_PAYLOAD} naming the bad event and field, when any event
	 * breaks the contract (nothing is stored); {@code STORE_UNAVAILABLE}
	 */
	public List<Event> append(List<NewEvent> events) {
		return append(events, null, false);
	}

	/**
	 * @param cause the run that writes them, or {@code null} for a push
	 * @param derivedIds whether ids shaped like A2's derived ids are allowed (they are, for runs)
	 */
	List<Event> append(List<NewEvent> events, @Nullable Cause cause, boolean derivedIds) {
		return append(events, cause, derivedIds, null);
	}

	/**
	 * @param clearIndex the clear index the session must still have ({@code null}: any), or the
	 * append fails with {@code ABORTED} and stores nothing: a run's, its trigger's
	 */
	List<Event> append(List<NewEvent> events, @Nullable Cause cause, boolean derivedIds, @Nullable Integer clearIndex) {
		return Observation.createNotStarted(A2Observations.APPEND, this.server.observations)
			.lowCardinalityKeyValue(A2Observations.CONTRACT, this.contract.name())
			.highCardinalityKeyValue(A2Observations.SESSION, this.id)
			.observe(() -> appendObserved(events, cause, derivedIds, clearIndex));
	}

	private List<Event> appendObserved(List<NewEvent> events, @Nullable Cause cause, boolean derivedIds,
			@Nullable Integer clearIndex) {
		List<Prepared> prepared = prepareAll(events, cause, derivedIds);
		List<EventToStore> toStore = prepared.stream().map(Prepared::toStore).toList();
		AppendLeases leases = leaseAhead(toStore);
		try {
			List<StoredEvent> stored = this.server.events.append(this.contract.name(), this.id,
					(leases != null) ? leases.events() : toStore, clearIndex);
			UncommittedWrites.record(this.contract.name(), this.id);
			List<Event> result = new ArrayList<>(stored.size());
			List<Event> appendedNow = new ArrayList<>();
			List<StoredEvent> storedNow = new ArrayList<>();
			boolean work = false;
			for (int i = 0; i < stored.size(); i++) {
				StoredEvent row = stored.get(i);
				Prepared source = prepared.get(i);
				// the store answers a new event with the payload text it was given, an existing one with what it read
				boolean isNew = row.payload() == source.toStore().payload();
				Object payload = isNew ? source.value() : this.server.payloads.read(this.contract.payloadType(row.type()), row.payload());
				Event event = new Event(row.index(), row.id(), row.type(), payload, row.createdAt(), row.clearIndex(), row.cause());
				result.add(event);
				if (isNew) {
					appendedNow.add(event);
					storedNow.add(row);
					work |= !source.toStore().work().isEmpty();
				}
			}
			afterCommit(work, appendedNow, leases, storedNow);
			return result;
		}
		finally {
			if (leases != null) {
				// a no-op once started; else the append failed, or stored nothing new: its permits go back
				leases.abandon();
			}
		}
	}

	/**
	 * Leases the append's units to this instance when it runs them and the append commits on its own
	 * (in an application's transaction, the commit may come much later).
	 */
	private @Nullable AppendLeases leaseAhead(List<EventToStore> toStore) {
		Drainer drainer = this.server.drainerIfAny();
		if (drainer == null || TransactionSynchronizationManager.isSynchronizationActive()
				|| !this.server.events.storesLeases()) {
			return null;
		}
		return drainer.leaseAhead(this.contract.name(), toStore);
	}

	/** Validates events and decides their ids and the work they create, for an append. */
	List<EventToStore> prepare(List<NewEvent> events, @Nullable Cause cause, boolean derivedIds) {
		if (events.isEmpty()) {
			return List.of();
		}
		return prepareAll(events, cause, derivedIds).stream().map(Prepared::toStore).toList();
	}

	private record Prepared(EventToStore toStore, Object value) {
	}

	private List<Prepared> prepareAll(List<NewEvent> events, @Nullable Cause cause, boolean derivedIds) {
		if (events == null || events.isEmpty()) {
			throw A2Exception.invalid("events must be a non-empty list");
		}
		if (events.size() > A2Server.MAX_EVENTS_PER_APPEND) {
			throw A2Exception.invalid("events has " + events.size() + " events; one append takes at most "
					+ A2Server.MAX_EVENTS_PER_APPEND);
		}
		List<Prepared> prepared = new ArrayList<>(events.size());
		Map<String, Integer> positions = new HashMap<>();
		for (int i = 0; i < events.size(); i++) {
			NewEvent event = events.get(i);
			String where = "events[" + i + "]";
			if (event == null) {
				throw A2Exception.invalid(where + " must be an event, not null");
			}
			Class<?> payloadType = payloadType(event.type(), where);
			String eventId = eventId(event.id(), where, derivedIds);
			Integer earlier = positions.putIfAbsent(eventId, i);
			if (earlier != null) {
				throw A2Exception.invalid(where + ".id repeats the id of events[" + earlier + "]; ids are unique within a session");
			}
			PayloadBinder.Bound bound = this.server.payloads.bind(payloadType, event.payload(), where + ".payload");
			List<WorkUnit> work = workFor(eventId, event.type(), bound.value());
			prepared.add(new Prepared(new EventToStore(eventId, event.type(), bound.json(), cause, work), bound.value()));
		}
		return prepared;
	}

	/** The consumer work a new event creates: a unit per independent or keyed consumer, a cursor move per fixed one. */
	private List<WorkUnit> workFor(String eventId, String type, Object payload) {
		if (this.server.work == null) {
			return List.of();
		}
		List<WorkUnit> work = new ArrayList<>();
		for (Consumer consumer : this.server.consumers(this.contract.name())) {
			if (!consumer.takes(type)) {
				continue;
			}
			if (consumer.lane() instanceof Lane.Fixed) {
				work.add(WorkUnit.cursor(consumer.name(), consumer.backfill(), consumer.types()));
			}
			else if (consumer.lane() instanceof Lane.Keyed keyed) {
				work.add(WorkUnit.head(consumer.name(), laneKey(consumer, keyed, new Lane.KeyInput(this.id, eventId, type, payload))));
			}
			else {
				work.add(WorkUnit.head(consumer.name(), null));
			}
		}
		return work;
	}

	/**
	 * The key of a keyed consumer's unit for an event. The key is the application's code: one that
	 * throws fails the append (the event's work could not be made) with an error that names the
	 * consumer and the event's type, instead of a bare exception no one can trace to its consumer.
	 */
	static @Nullable String laneKey(Consumer consumer, Lane.Keyed keyed, Lane.KeyInput input) {
		try {
			return keyed.key().apply(input);
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException("The lane key of consumer '" + consumer.name() + "' failed for an event of type '"
					+ input.type() + "' in session '" + input.session() + "': " + ex, ex);
		}
	}

	/**
	 * Starts draining the work an append created, and aborts what its events abort, once it commits:
	 * the units it leased start here at once, the rest are claimed.
	 */
	private void afterCommit(boolean work, List<Event> appended, @Nullable AppendLeases leases,
			List<StoredEvent> storedNow) {
		if (appended.isEmpty()) {
			// nothing new was stored: the caller's abandon gives the leases' permits back
			return;
		}
		Drainer drainer = this.server.drainerIfAny();
		Runnable after = () -> {
			if (drainer != null) {
				for (Event event : appended) {
					drainer.abortOn(this.contract.name(), this.id, event);
				}
				boolean unclaimed = work;
				if (leases != null) {
					boolean lapsed = leases.start(this.id, storedNow);
					unclaimed = lapsed || leases.leftUnleased();
				}
				if (unclaimed) {
					drainer.request(this.contract.name(), this.id);
				}
			}
			this.server.changes.publish(work ? SessionChange.Kind.WORK : SessionChange.Kind.EVENTS, this.contract.name(),
					this.id);
		};
		afterCommit(after);
	}

	/** Runs {@code after} once the current transaction commits, or now when there is none. */
	private static void afterCommit(Runnable after) {
		if (TransactionSynchronizationManager.isSynchronizationActive()) {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
				@Override
				public void afterCommit() {
					after.run();
				}
			});
		}
		else {
			after.run();
		}
	}

	/**
	 * A push: appends the events and applies a presence write beside them, in one transaction (both or
	 * neither), e.g. clearing {@code typing} as the message is sent.
	 * @throws A2Exception {@code INVALID_PAYLOAD} when an event or the presence write is bad (nothing is stored)
	 */
	public List<Event> append(List<NewEvent> events, @Nullable PresenceWrite presence) {
		if (presence == null) {
			return append(events);
		}
		PreparedPresence prepared = preparePresence(presence, "presence.");
		return StoreFailures.guard(() -> this.server.transactions.execute((status) -> {
			List<Event> stored = append(events);
			writePresence(prepared);
			return stored;
		}));
	}

	/** Everyone's presence in the session now (§9). */
	public PresenceSnapshot presence() {
		List<PresenceStore.PresenceRow> rows = requirePresence().read(this.contract.name(), this.id, this.server.clock().instant());
		Map<String, Map<String, PresenceValue>> participants = new TreeMap<>();
		for (PresenceStore.PresenceRow row : rows) {
			Object value = this.server.payloads.read(this.contract.presence().get(row.field()), String.valueOf(row.value()));
			participants.computeIfAbsent(row.participant(), (participant) -> new TreeMap<>())
				.put(row.field(), new PresenceValue(value, row.at()));
		}
		participants.replaceAll((participant, fields) -> Collections.unmodifiableMap(fields));
		return new PresenceSnapshot(Collections.unmodifiableMap(participants));
	}

	/**
	 * Writes a participant's presence: per field the latest {@code at} wins, {@code null} removes a
	 * field (and keeps an older write from bringing it back), and the participant's fields expire
	 * when not written for the server's presence TTL.
	 * @return the changes that applied (a field whose stored value is newer is left out)
	 * @throws A2Exception {@code INVALID_PAYLOAD} naming what is wrong (nothing is stored)
	 */
	public List<PresencePatch> presence(PresenceWrite write) {
		PreparedPresence prepared = preparePresence(write, "");
		return writePresence(prepared);
	}

	private record PreparedPresence(String participant, Map<String, @Nullable String> json, Map<String, @Nullable Object> values,
			Instant at) {
	}

	private PreparedPresence preparePresence(PresenceWrite write, String where) {
		requirePresence();
		PresenceRules.check(write, this.contract.presence(), this.contract.name(), where);
		Map<String, @Nullable String> json = new LinkedHashMap<>();
		Map<String, @Nullable Object> values = new LinkedHashMap<>();
		write.values().forEach((field, value) -> {
			if (value == null) {
				json.put(field, null);
				values.put(field, null);
			}
			else {
				PayloadBinder.Bound bound = this.server.payloads.bind(this.contract.presence().get(field), value,
						where + "values." + field);
				json.put(field, bound.json());
				values.put(field, bound.value());
			}
		});
		return new PreparedPresence(write.participant(), json, values, PresenceRules.at(write.at(), this.server.clock().instant()));
	}

	private List<PresencePatch> writePresence(PreparedPresence write) {
		Instant now = this.server.clock().instant();
		List<PresenceStore.PresenceRow> written = requirePresence().write(this.contract.name(), this.id, write.participant(),
				write.json(), write.at(), now.plus(this.server.presenceTtl), now);
		List<PresencePatch> patches = new ArrayList<>(written.size());
		for (PresenceStore.PresenceRow row : written) {
			patches.add(new PresencePatch(row.participant(), row.field(), write.values().get(row.field()), row.at()));
		}
		if (!patches.isEmpty()) {
			afterCommit(() -> this.server.changes.publish(SessionChange.Kind.PRESENCE, this.contract.name(), this.id));
		}
		return patches;
	}

	private PresenceStore requirePresence() {
		if (this.server.presence == null) {
			throw new IllegalStateException("presence needs a presence store; build the A2Server with a DataSource");
		}
		return this.server.presence;
	}

	/**
	 * A page of history: events after {@code after}, in index order, hiding clear markers and all
	 * that came before the latest clear.
	 * @param after the index to start after (0 for the beginning)
	 * @param limit 1 to {@value #MAX_HISTORY_LIMIT}
	 */
	public HistoryPage history(long after, int limit) {
		if (after < 0) {
			throw A2Exception.invalid("after must be 0 or more, was " + after);
		}
		if (limit < 1 || limit > MAX_HISTORY_LIMIT) {
			throw A2Exception.invalid("limit must be 1-" + MAX_HISTORY_LIMIT + ", was " + limit);
		}
		StoredPage page = this.server.events.history(this.contract.name(), this.id, after, limit);
		return new HistoryPage(page.events().stream().map(this::decode).toList(), page.head());
	}

	/** A reducer's state at the session's head. */
	public SessionState<?> state(String reducer) {
		return readState(reducer, null);
	}

	/**
	 * A reducer's state as of index {@code through}: the events after the latest clear at or before
	 * it, folded through it (or through the head, when the session is shorter).
	 */
	public SessionState<?> state(String reducer, long through) {
		if (through < 0) {
			throw A2Exception.invalid("through must be 0 or more, was " + through);
		}
		return readState(reducer, through);
	}

	/** A reducer's state at the head, typed. */
	public <S> SessionState<S> state(String reducer, Class<S> stateType) {
		SessionState<?> state = readState(reducer, null);
		return new SessionState<>(state.index(), stateType.cast(state.state()));
	}

	private SessionState<?> readState(String reducerName, @Nullable Long through) {
		Reducer<?> reducer = this.contract.reducer(reducerName);
		return this.server.state.read(this.contract.name(), this.id, reducerName, reducer, through, this::decode);
	}

	/**
	 * Starts the session over: a clear marker is appended, history and state start after it.
	 * @return the index of the clear marker
	 */
	public long clear() {
		return clearIf(null);
	}

	/**
	 * Clears only if the session's last index is still {@code ifLastIndex}.
	 * @return the index of the clear marker
	 * @throws A2Exception {@code CONFLICT} when the session has moved on (nothing is changed)
	 */
	public long clear(long ifLastIndex) {
		return clearIf(ifLastIndex);
	}

	private long clearIf(@Nullable Long ifLastIndex) {
		return clearIf(ifLastIndex, null);
	}

	/**
	 * @param clearIndex the clear index the session must still have ({@code null}: any), or the clear
	 * fails with {@code ABORTED} and changes nothing: a run's, its trigger's
	 */
	long clearIf(@Nullable Long ifLastIndex, @Nullable Integer clearIndex) {
		StoredEvent marker = StoreFailures.guard(() -> this.server.transactions.execute((status) -> {
			StoredEvent cleared = this.server.events.clear(this.contract.name(), this.id, ifLastIndex, clearIndex);
			UncommittedWrites.record(this.contract.name(), this.id);
			if (this.server.work != null) {
				this.server.work.endBefore(this.contract.name(), this.id, cleared.index(), cleared.clearIndex() + 1);
			}
			return cleared;
		}));
		// in an application's transaction the clear may yet roll back: until it commits, the runs of the
		// events before it go on, and what they return must still commit with their units
		afterCommit(() -> afterClear(marker.index()));
		return marker.index();
	}

	/** What a clear ends once it committed: the runs of the events before it, and their snapshots. */
	private void afterClear(long markerIndex) {
		this.server.changes.publish(SessionChange.Kind.CLEARED, this.contract.name(), this.id);
		Drainer drainer = this.server.drainerIfAny();
		if (drainer != null) {
			drainer.abortCleared(this.contract.name(), this.id, markerIndex);
		}
		try {
			// a transaction of its own: after a commit, the committed transaction's connection is still
			// bound to the thread, and a write that joined it would run in a transaction already over
			this.server.separateTransactions.executeWithoutResult(
					(status) -> this.server.snapshots.deleteThrough(this.contract.name(), this.id, markerIndex));
		}
		catch (RuntimeException ex) {
			// the clear stands; the old snapshots are never read again and go with the next clear
			logger.warn("Could not delete the snapshots of session '" + this.id + "' before its clear", ex);
		}
	}

	/**
	 * Read your writes: drives a fixed-lane consumer's cursor in this session until it has processed
	 * the session's events through its current head, and answers the index it reached. A cursor held
	 * by another instance or waiting out a back-off is waited for (25 ms doubling to 1 s). Call it
	 * after the transaction that wrote the events commits: the consumer cannot see them before.
	 * @throws A2Exception {@code CONSUMER_DEAD_LETTERED} when the cursor is dead-lettered
	 * @throws IllegalStateException inside a transaction that appended to or cleared this session and
	 * has not committed
	 */
	public long consume(String consumer) {
		return consume(consumer, null, null);
	}

	/**
	 * Drives a fixed-lane consumer's cursor in this session until it is past {@code through}, or
	 * through the head when the session is shorter, and answers the index it reached; see
	 * {@link #consume(String)}.
	 */
	public long consume(String consumer, long through) {
		return consume(consumer, through, null);
	}

	/** @param caller the consumer whose run consumes, or {@code null} */
	long consume(String consumer, @Nullable Long through, @Nullable String caller) {
		if (UncommittedWrites.contains(this.contract.name(), this.id)) {
			// §5.2: a wait that cannot end fails at once. Not an A2Exception: no §11 code fits the
			// caller's own code calling at the wrong time, as for a consumer that consumes itself
			throw new IllegalStateException("consume('" + consumer + "') was called inside a transaction that wrote to session '"
					+ this.id + "' and has not committed: consumer '" + consumer + "' runs in transactions of its own, which"
					+ " cannot see those writes before the commit, so it would wait for ever. Call consume after the"
					+ " transaction commits (outside the @Transactional method, or from an afterCommit callback)");
		}
		return this.server.drainer().consume(this.contract.name(), this.id, consumer, through, caller);
	}

	/**
	 * Appends {@code events} at {@code at}, once, whichever instance's sweep delivers it. Scheduling
	 * the same {@code name} again before the next clear is a no-op; a clear cancels the task.
	 */
	public void schedule(String name, Instant at, NewEvent... events) {
		for (int i = 0; i < events.length; i++) {
			if (events[i] != null && events[i].id() != null) {
				// §4 as for an append: the UUIDv5 shape is kept for the ids A2 derives (the task's events get one)
				eventId(events[i].id(), "events[" + i + "]", false);
			}
		}
		int clearIndex = currentClearIndex();
		String id = DerivedIds.schedule(this.contract.name(), this.id, "", taskName(name), clearIndex, null);
		scheduleTask(id, at, Arrays.asList(events), null, false, clearIndex);
	}

	/** Clears the session at {@code at} if its last index is then still {@code ifLastIndex}. */
	public void scheduleClear(String name, Instant at, @Nullable Long ifLastIndex) {
		int clearIndex = currentClearIndex();
		String id = DerivedIds.scheduleClear(this.contract.name(), this.id, "", taskName(name), clearIndex, ifLastIndex,
				null);
		scheduleTask(id, at, List.of(), ifLastIndex, true, clearIndex);
	}

	/**
	 * A task's name, refused when {@code null}: the derived id leaves a null part out, so a task without
	 * a name would be stored under an id no name gives, and scheduling it "again" could not be told apart.
	 */
	static String taskName(@Nullable String name) {
		if (name == null) {
			throw A2Exception.invalid("name must not be null: it names the task, and scheduling the same name again "
					+ "is a no-op");
		}
		return name;
	}

	private int currentClearIndex() {
		return this.server.events.head(this.contract.name(), this.id).clearIndex();
	}

	/** The earliest instant a task may be due at: one in the past is delivered at the next sweep. */
	static final Instant EARLIEST_DUE = Instant.parse("0001-01-01T00:00:00Z");

	/** The latest instant a task may be due at. */
	static final Instant LATEST_DUE = Instant.parse("9999-12-31T23:59:59Z");

	/** The instant {@code delay} from now, refused when it is no instant a task may be due at. */
	Instant dueAfter(Duration delay) {
		if (delay == null) {
			throw A2Exception.invalid("delay must not be null");
		}
		try {
			return this.server.clock().instant().plus(delay);
		}
		catch (DateTimeException | ArithmeticException ex) {
			throw A2Exception.invalid("delay must bring the task's instant to " + LATEST_DUE + " at the latest, was " + delay);
		}
	}

	/**
	 * Stores a task for the sweep to deliver at {@code at}. Its delivery drops it unless the session's
	 * clear index is then still {@code clearIndex}: a clear cancels the tasks of the time before it,
	 * whenever they are stored (a run of an event from before the clear may go on after it).
	 */
	void scheduleTask(String taskId, @Nullable Instant at, List<NewEvent> events, @Nullable Long ifLastIndex, boolean clear,
			int clearIndex) {
		WorkStore work = this.server.work;
		if (work == null) {
			throw new IllegalStateException("scheduling needs a work store; build the A2Server with a DataSource");
		}
		if (at == null || at.isBefore(EARLIEST_DUE) || at.isAfter(LATEST_DUE)) {
			// outside it PostgreSQL cannot store the instant, or the JDBC conversion throws a raw DateTimeException
			throw A2Exception.invalid("at must be an instant from " + EARLIEST_DUE + " to " + LATEST_DUE + ", was " + at);
		}
		String payload = null;
		if (!clear) {
			List<NewEvent> withIds = new ArrayList<>(events.size());
			for (int i = 0; i < events.size(); i++) {
				NewEvent event = events.get(i);
				withIds.add(new NewEvent(event.type(), event.payload(),
						(event.id() != null) ? event.id() : DerivedIds.scheduledEvent(taskId, i)));
			}
			payload = this.server.payloads.writeScheduled(prepareAll(withIds, null, true).stream().map(Prepared::toStore).toList());
		}
		work.schedule(new WorkStore.ScheduledTask(this.contract.name(), this.id, taskId, at, clearIndex, payload, ifLastIndex));
	}

	A2Server server() {
		return this.server;
	}

	private Event decode(StoredEvent stored) {
		return this.server.payloads.event(this.contract, stored);
	}

	private Class<?> payloadType(@Nullable String type, String where) {
		if (type == null || type.isEmpty()) {
			throw A2Exception.invalid(where + ".type must be a non-empty string");
		}
		Class<?> payloadType = this.contract.payloadType(type);
		if (payloadType == null) {
			throw A2Exception.invalid(where + ".type '" + type + "' is not an event type of contract '"
					+ this.contract.name() + "'; it has " + this.contract.events().keySet());
		}
		return payloadType;
	}

	private static String eventId(@Nullable String id, String where, boolean derivedIds) {
		if (id == null) {
			return UUID.randomUUID().toString();
		}
		if (id.isEmpty() || id.length() > MAX_ID_LENGTH) {
			throw A2Exception.invalid(where + ".id must be 1-" + MAX_ID_LENGTH + " characters, was " + id.length());
		}
		if (!StorableText.isStorable(id)) {
			throw A2Exception.invalid(StorableText.refusal(where + ".id"));
		}
		if (!derivedIds && DerivedIds.isDerivedShape(id)) {
			throw A2Exception.invalid(where + ".id is shaped like a UUIDv5, which A2 keeps for the ids it derives for"
					+ " consumers; leave the id out for a random one, or use another shape such as a UUIDv4");
		}
		return id;
	}

	@Override
	public String toString() {
		return "Session[" + this.contract.name() + "/" + this.id + "]";
	}

}
