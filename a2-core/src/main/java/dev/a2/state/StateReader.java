package dev.a2.state;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import dev.a2.Event;
import dev.a2.Reducer;
import dev.a2.SessionState;
import dev.a2.store.EventStore;
import dev.a2.store.SessionHead;
import dev.a2.store.SnapshotStore;
import dev.a2.store.SnapshotStore.Snapshot;
import dev.a2.store.StoredEvent;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Answers a reducer's state of a session without refolding its whole log: it starts from the
 * nearest of the cached state and the stored snapshot, folds only the events after it, and stores a
 * snapshot at every multiple of {@code snapshotEvery} events after the latest clear that it folds.
 * Snapshots sit at fixed multiples, so a read through any index folds fewer than
 * {@code snapshotEvery} events once the session has been read past it.
 */
public final class StateReader {

	private static final int PAGE = 1000;

	private final EventStore events;

	private final SnapshotStore snapshots;

	private final JsonMapper mapper;

	private final int snapshotEvery;

	private final StateCache cache;

	/**
	 * @param snapshotEvery snapshot every this many events (at least 1)
	 * @param cacheSize how many (session, reducer) states to keep in memory; 0 for none
	 */
	public StateReader(EventStore events, SnapshotStore snapshots, JsonMapper mapper, int snapshotEvery, int cacheSize) {
		if (snapshotEvery < 1) {
			throw new IllegalArgumentException("snapshotEvery must be at least 1, was " + snapshotEvery);
		}
		if (cacheSize < 0) {
			throw new IllegalArgumentException("cacheSize must not be negative, was " + cacheSize);
		}
		this.events = events;
		this.snapshots = snapshots;
		this.mapper = mapper;
		this.snapshotEvery = snapshotEvery;
		this.cache = new StateCache(cacheSize);
	}

	/**
	 * The state after folding the session's events since its latest clear at or before
	 * {@code through} (the head when {@code null}), through {@code through}.
	 * @param decode binds a stored event for the fold
	 */
	public <S> SessionState<S> read(String contract, String session, String reducerName, Reducer<S> reducer,
			@Nullable Long through, Function<StoredEvent, Event> decode) {
		SessionHead head = this.events.head(contract, session);
		long target = (through != null) ? Math.min(through, head.lastIndex()) : head.lastIndex();
		long base = (target >= head.clearedAt()) ? head.clearedAt()
				: this.events.clearedAtOrBefore(contract, session, target);
		String key = StateCache.key(contract, session, reducerName);

		long at = base;
		String startState = null;
		boolean fromCache = false;
		StateCache.Entry cached = this.cache.get(key);
		if (cached != null && cached.index() > base && cached.index() <= target) {
			at = cached.index();
			startState = cached.state();
			fromCache = true;
		}
		if (at < target) {
			Snapshot snapshot = this.snapshots.latest(contract, session, reducerName, at, target);
			if (snapshot != null) {
				at = snapshot.index();
				startState = snapshot.state();
				fromCache = false;
			}
		}
		S state = this.mapper.readValue((startState != null) ? startState : this.mapper.writeValueAsString(reducer.initial()),
				reducer.stateType());

		long folded = at;
		// reads of an era before the latest clear fold without snapshots: the next clear would drop them
		boolean snapshotting = base == head.clearedAt();
		List<Snapshot> toSave = new ArrayList<>();
		while (folded < target) {
			List<StoredEvent> page = this.events.range(contract, session, folded, target, PAGE);
			if (page.isEmpty()) {
				throw new IllegalStateException("session '" + session + "' has no events after " + folded
						+ " though its head is " + head.lastIndex());
			}
			for (StoredEvent stored : page) {
				state = reducer.fold().apply(state, decode.apply(stored));
				folded = stored.index();
				if (snapshotting && (folded - base) % this.snapshotEvery == 0) {
					toSave.add(new Snapshot(folded, this.mapper.writeValueAsString(state)));
				}
			}
		}
		this.snapshots.save(contract, session, reducerName, toSave);
		// Inside a transaction the fold may have seen rows that transaction wrote, and it may yet roll
		// back, wholly or to a savepoint (which an after-commit callback would not notice): only a fold
		// of rows committed when read goes into the cache every reader shares. The snapshots saved above
		// join the transaction, so they roll back with it.
		boolean committedOnly = !TransactionSynchronizationManager.isActualTransactionActive();
		if (committedOnly && folded > base && !(fromCache && folded == at)) {
			this.cache.offer(key, new StateCache.Entry(folded, this.mapper.writeValueAsString(state)));
		}
		return new SessionState<>(target, state);
	}

}
