package dev.a2.testkit;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import dev.a2.store.Claim;
import dev.a2.store.DeadLetter;
import dev.a2.store.EventStore;
import dev.a2.store.EventToStore;
import dev.a2.store.Finish;
import dev.a2.store.SessionHead;
import dev.a2.store.SnapshotStore;
import dev.a2.store.StoredEvent;
import dev.a2.store.StoredPage;
import dev.a2.store.WorkStore;
import org.jspecify.annotations.Nullable;

/**
 * A2's stores in memory, for {@link ConsumerRun}: the events of the sessions, no snapshots (state
 * folds the log), and the scheduled tasks a run asks for. Nothing here runs consumers.
 */
final class MemoryStores implements EventStore, SnapshotStore, WorkStore {

	private static final String NOT_HERE = " is not part of a unit test of a consumer's code; test it with @A2Test or A2TestExtension";

	private final Clock clock;

	private final Map<List<String>, Log> logs = new HashMap<>();

	private final List<ScheduledTask> scheduled = new ArrayList<>();

	MemoryStores(Clock clock) {
		this.clock = clock;
	}

	synchronized List<ScheduledTask> scheduled() {
		return List.copyOf(this.scheduled);
	}

	private Log log(String contract, String session) {
		return this.logs.computeIfAbsent(List.of(contract, session), (key) -> new Log());
	}

	@Override
	public synchronized List<StoredEvent> append(String contract, String session, List<EventToStore> events,
			@Nullable Integer clearIndex) {
		if (events.isEmpty()) {
			throw new IllegalArgumentException("an append needs at least one event");
		}
		Log log = log(contract, session);
		if (clearIndex != null && log.clearIndex != clearIndex) {
			throw clearedSince(session, clearIndex, "appends");
		}
		Instant now = this.clock.instant();
		List<StoredEvent> stored = new ArrayList<>(events.size());
		for (EventToStore event : events) {
			StoredEvent existing = log.events.stream().filter((e) -> e.id().equals(event.id())).findFirst().orElse(null);
			if (existing != null) {
				stored.add(existing);
				continue;
			}
			StoredEvent added = new StoredEvent(++log.lastIndex, event.id(), event.type(), event.payload(), now,
					log.clearIndex, event.cause());
			log.events.add(added);
			stored.add(added);
		}
		return stored;
	}

	/** What a run's write fails with once the session was cleared since its trigger, as on PostgreSQL. */
	private static A2Exception clearedSince(String session, int clearIndex, String write) {
		return new A2Exception(ErrorCode.ABORTED, "session '" + session + "' was cleared since the event whose run " + write
				+ " (clear index " + clearIndex + "): nothing was changed");
	}

	@Override
	public synchronized StoredPage history(String contract, String session, long after, int limit) {
		Log log = log(contract, session);
		long from = Math.max(after, log.clearedAt);
		List<StoredEvent> page = log.events.stream().filter((e) -> e.index() > from).limit(limit).toList();
		return new StoredPage(page, log.lastIndex, log.clearedAt);
	}

	@Override
	public synchronized List<StoredEvent> range(String contract, String session, long after, long through, int limit) {
		return log(contract, session).events.stream()
			.filter((e) -> e.index() > after && e.index() <= through)
			.limit(limit)
			.toList();
	}

	@Override
	public synchronized SessionHead head(String contract, String session) {
		Log log = log(contract, session);
		return new SessionHead(log.lastIndex, log.clearIndex, log.clearedAt);
	}

	@Override
	public synchronized long clearedAtOrBefore(String contract, String session, long index) {
		return log(contract, session).events.stream()
			.filter((e) -> e.type().equals(CLEAR_MARKER) && e.index() <= index)
			.mapToLong(StoredEvent::index)
			.max()
			.orElse(0);
	}

	@Override
	public synchronized StoredEvent clear(String contract, String session, @Nullable Long ifLastIndex,
			@Nullable Integer clearIndex) {
		Log log = log(contract, session);
		if (clearIndex != null && log.clearIndex != clearIndex) {
			throw clearedSince(session, clearIndex, "clears");
		}
		if (ifLastIndex != null && log.lastIndex != ifLastIndex) {
			throw new A2Exception(ErrorCode.CONFLICT, "session '" + session + "' was not cleared: its last index is "
					+ log.lastIndex + ", not " + ifLastIndex);
		}
		StoredEvent marker = new StoredEvent(++log.lastIndex, UUID.randomUUID().toString(), CLEAR_MARKER, "{}",
				this.clock.instant(), log.clearIndex, null);
		log.events.add(marker);
		log.clearIndex++;
		log.clearedAt = marker.index();
		return marker;
	}

	@Override
	public @Nullable Snapshot latest(String contract, String session, String reducer, long after, long through) {
		return null;
	}

	@Override
	public void save(String contract, String session, String reducer, List<Snapshot> snapshots) {
		// state folds the log each time: a unit test's logs are short
	}

	@Override
	public void deleteThrough(String contract, String session, long index) {
	}

	@Override
	public synchronized void schedule(ScheduledTask task) {
		if (this.scheduled.stream().noneMatch((t) -> t.contract().equals(task.contract()) && t.session().equals(task.session())
				&& t.id().equals(task.id()))) {
			this.scheduled.add(task);
		}
	}

	@Override
	public synchronized void endBefore(String contract, String session, long markerIndex, int clearIndex) {
		this.scheduled.removeIf((t) -> t.contract().equals(contract) && t.session().equals(session) && t.clearIndex() < clearIndex);
	}

	@Override
	public List<Claim> claim(String contract, String session, Collection<String> consumers, Instant now, Instant leaseUntil,
			int limit, @Nullable Integer owner) {
		throw new UnsupportedOperationException("claiming work" + NOT_HERE);
	}

	@Override
	public Set<UUID> finish(List<Finish> finishes, Instant now) {
		throw new UnsupportedOperationException("finishing work" + NOT_HERE);
	}

	@Override
	public Set<UUID> renew(Collection<Claim> claims, Instant leaseUntil) {
		throw new UnsupportedOperationException("renewing leases" + NOT_HERE);
	}

	@Override
	public void release(Collection<Claim> claims) {
		throw new UnsupportedOperationException("releasing claims" + NOT_HERE);
	}

	@Override
	public int expireExhausted(Instant now, int maxAttempts, String error) {
		return 0;
	}

	@Override
	public List<SessionRef> sessionsWithDueWork(Instant now, Collection<ConsumerRef> consumers, int limit) {
		return List.of();
	}

	@Override
	public String backfill(String contract, String consumer, @Nullable Set<String> types, String after, int limit) {
		return "";
	}

	@Override
	public void backfill(String contract, String session, String consumer, @Nullable Set<String> types) {
		// no cursors here: consume is not (see cursor)
	}

	@Override
	public @Nullable CursorState cursor(String contract, String session, String consumer) {
		throw new UnsupportedOperationException("consume" + NOT_HERE);
	}

	@Override
	public List<DeadLetter> deadLetters(@Nullable String contract, @Nullable String session, @Nullable String consumer,
			int limit) {
		return List.of();
	}

	@Override
	public void recordConsumers(Collection<ConsumerRef> consumers) {
		throw new UnsupportedOperationException("running consumers" + NOT_HERE);
	}

	@Override
	public List<ConsumerRef> recordedConsumers(@Nullable String contract) {
		return List.of();
	}

	@Override
	public boolean redrive(String contract, String session, String consumer, long index, boolean retry) {
		throw new UnsupportedOperationException("redrive" + NOT_HERE);
	}

	@Override
	public List<PendingWork> pending() {
		return List.of();
	}

	@Override
	public List<Upcoming> upcoming(Collection<ConsumerRef> consumers, Collection<String> contracts, int limit) {
		return List.of();
	}

	@Override
	public boolean deliverDue(Instant now, Collection<String> contracts, Consumer<ScheduledTask> delivery) {
		return false;
	}

	@Override
	public void postpone(ScheduledTask task, Instant at) {
		// no tasks here: none is delivered
	}

	private static final class Log {

		final List<StoredEvent> events = new ArrayList<>();

		long lastIndex;

		int clearIndex;

		long clearedAt;

	}

}
