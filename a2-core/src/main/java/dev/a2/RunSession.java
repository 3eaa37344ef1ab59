package dev.a2;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * A session as a consumer run sees it. What the run writes carries its cause and derived ids, so a
 * re-run writes nothing twice; state defaults to the state as of the triggering event.
 */
public final class RunSession {

	private final Session session;

	private final Consumer consumer;

	private final Event trigger;

	private final Cause cause;

	/** The run's signal, whose interrupt A2's store calls keep for after them; {@code null} outside a run of A2's. */
	private final @Nullable AbortSignal signal;

	RunSession(Session session, Consumer consumer, Event trigger, Cause cause, @Nullable AbortSignal signal) {
		this.session = session;
		this.consumer = consumer;
		this.trigger = trigger;
		this.cause = cause;
		this.signal = signal;
	}

	/**
	 * The session as a run of {@code consumer} for {@code trigger} sees it: what it writes carries the
	 * cause {@code (consumer, lane, trigger's index, attempt)} and ids derived as in a real run. For
	 * tests that run a consumer's code themselves; A2 builds its runs' sessions itself.
	 */
	public static RunSession of(Session session, Consumer consumer, Event trigger, int attempt) {
		String lane = null;
		if (consumer.lane() instanceof Lane.Fixed fixed) {
			lane = fixed.name();
		}
		else if (consumer.lane() instanceof Lane.Keyed keyed) {
			lane = Session.laneKey(consumer, keyed, new Lane.KeyInput(session.id(), trigger.id(), trigger.type(), trigger.payload()));
		}
		return new RunSession(session, consumer, trigger, new Cause(consumer.name(), lane, trigger.index(), attempt), null);
	}

	/** The consumer whose run sees the session. */
	Consumer consumer() {
		return this.consumer;
	}

	/** The session id. */
	public String id() {
		return this.session.id();
	}

	/**
	 * Appends now (visible to readers at once). Events without an id get one derived from the
	 * trigger, {@code name} and their position, so the same call in a re-run appends nothing new.
	 * @param name names this append among the run's appends
	 * @throws A2Exception {@code ABORTED} when the session was cleared since the trigger (the clear
	 * aborted the run), or the attempt's own abort reason ({@code SUPERSEDED_ATTEMPT}, {@code CLAIM_EXPIRED}…)
	 * when it was aborted or its lease lapsed without renewal: nothing is appended
	 */
	public List<Event> append(String name, NewEvent... events) {
		if (this.signal != null) {
			// an attempt that may have been taken over appends nothing more: its events would land among the
			// new attempt's (the store's clear check fences only a clear)
			this.signal.checkHeld(this.session.server().clock().instant());
		}
		List<NewEvent> withIds = new ArrayList<>(events.length);
		for (int i = 0; i < events.length; i++) {
			NewEvent event = events[i];
			String id = (event.id() != null) ? event.id()
					: DerivedIds.appendedEvent(this.trigger.id(), name, i, this.consumer.name());
			withIds.add(new NewEvent(event.type(), event.payload(), id));
		}
		// a clear since the trigger ended this run: nothing it goes on to append lands after the clear
		return store(() -> this.session.append(withIds, this.cause, true, this.trigger.clearIndex()));
	}

	/** The reducer's state as of the triggering event, however far the log has moved on. */
	public SessionState<?> state(String reducer) {
		return store(() -> this.session.state(reducer, this.trigger.index()));
	}

	/** The reducer's state as of the event at {@code through} (an index past the head means the head). */
	public SessionState<?> state(String reducer, long through) {
		return store(() -> this.session.state(reducer, through));
	}

	/** The reducer's state as of the triggering event, typed. */
	public <S> SessionState<S> state(String reducer, Class<S> stateType) {
		return typed(state(reducer), stateType);
	}

	/**
	 * The reducer's state at the session's head now, typed: the events appended since the trigger
	 * included (a cancel that arrived while the run was queued). {@link #state(String)} is as of the
	 * trigger, so that a re-run decides as the first attempt did.
	 */
	public <S> SessionState<S> latestState(String reducer, Class<S> stateType) {
		return typed(state(reducer, Long.MAX_VALUE), stateType);
	}

	private static <S> SessionState<S> typed(SessionState<?> state, Class<S> stateType) {
		return new SessionState<>(state.index(), stateType.cast(state.state()));
	}

	/** Events after index {@code after}, at most {@code limit}, with the session's head. */
	public HistoryPage history(long after, int limit) {
		return store(() -> this.session.history(after, limit));
	}

	/** Everyone's presence in the session now. */
	public PresenceSnapshot presence() {
		return store(this.session::presence);
	}

	/**
	 * Writes a participant's presence, as {@link Session#presence(PresenceWrite)} does: an agent
	 * shows what it is doing ({@code thinking}, {@code streaming}) while the run goes on. Presence is
	 * not part of the log, so a re-run simply writes it again.
	 * @throws A2Exception {@code INVALID_PAYLOAD} when the write breaks the contract's presence rules
	 */
	public List<PresencePatch> presence(PresenceWrite write) {
		return store(() -> this.session.presence(write));
	}

	/**
	 * How long a presence write lasts unless the participant writes again (the server's presence
	 * TTL): a run that shows what it does for longer writes it again within this time.
	 */
	public Duration presenceTtl() {
		return this.session.server().presenceTtl;
	}

	/**
	 * Drives a fixed-lane consumer's cursor in this session past the session's head, and answers
	 * the index it reached; see {@link Session#consume(String, long)}.
	 */
	public long consume(String consumerName) {
		return this.session.consume(consumerName, null, this.consumer.name());
	}

	/** Drives a fixed-lane consumer's cursor in this session past {@code through}. */
	public long consume(String consumerName, long through) {
		return this.session.consume(consumerName, through, this.consumer.name());
	}

	/**
	 * Appends {@code events} after {@code delay}. The task's id is derived from the trigger and
	 * {@code name}, so scheduling again from a re-run is a no-op; a clear of the session cancels it.
	 */
	public void schedule(String name, Duration delay, NewEvent... events) {
		schedule(name, this.session.dueAfter(delay), events);
	}

	/** Appends {@code events} at {@code at}, once across instances; a re-run scheduling again changes nothing. */
	public void schedule(String name, Instant at, NewEvent... events) {
		String id = DerivedIds.schedule(this.session.contract().name(), this.session.id(), this.trigger.id(),
				Session.taskName(name), this.trigger.clearIndex(), this.consumer.name());
		// the task belongs to the trigger's time: a clear since then cancels it, as it ended the run
		store(() -> {
			this.session.scheduleTask(id, at, Arrays.asList(events), null, false, this.trigger.clearIndex());
			return null;
		});
	}

	/** Clears the session after {@code delay} if its last index is then still {@code ifLastIndex}. */
	public void scheduleClear(String name, Duration delay, @Nullable Long ifLastIndex) {
		String id = DerivedIds.scheduleClear(this.session.contract().name(), this.session.id(), this.trigger.id(),
				Session.taskName(name), this.trigger.clearIndex(), ifLastIndex, this.consumer.name());
		Instant at = this.session.dueAfter(delay);
		store(() -> {
			this.session.scheduleTask(id, at, List.of(), ifLastIndex, true, this.trigger.clearIndex());
			return null;
		});
	}

	/**
	 * Clears the session: a marker, history and state start over, the pending work of earlier events
	 * ends.
	 * @throws A2Exception {@code ABORTED} when the session was cleared since the trigger (the clear
	 * ended this run): the session's new start is not cleared again
	 */
	public long clear() {
		return store(() -> this.session.clearIf(null, this.trigger.clearIndex()));
	}

	/** Clears the session if its last index is still {@code ifLastIndex}; {@code CONFLICT} otherwise. */
	public long clear(long ifLastIndex) {
		return store(() -> this.session.clearIf(ifLastIndex, this.trigger.clearIndex()));
	}

	/**
	 * A store call of the run's, safe from the abort's interrupt ({@link AbortSignal#uninterrupted}).
	 * Not {@code consume}, whose wait for another run the abort must end.
	 */
	private <T> T store(Supplier<T> call) {
		return (this.signal != null) ? this.signal.uninterrupted(call) : call.get();
	}

}
