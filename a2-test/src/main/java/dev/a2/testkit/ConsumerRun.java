package dev.a2.testkit;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import dev.a2.A2Server;
import dev.a2.AbortSignal;
import dev.a2.Consumer;
import dev.a2.ConsumerContext;
import dev.a2.Contract;
import dev.a2.Event;
import dev.a2.NewEvent;
import dev.a2.RunSession;
import dev.a2.Session;
import dev.a2.store.WorkStore;
import org.jspecify.annotations.Nullable;

/**
 * A unit test of a consumer's code, without a database or a drainer: the session lives in memory,
 * the run gets a real {@link ConsumerContext} (its trigger, attempt, abort signal, and a session that
 * derives ids and records causes as in a real run), and what the run appended, returned and
 * scheduled can be read afterwards. Runs in milliseconds.
 * <pre>{@code
 * ConsumerRun run = ConsumerRun.of(chat, assistant).given(NewEvent.of("message.sent", earlier));
 * Object returned = run.run(NewEvent.of("message.sent", new MessageSent("hi @assistant", "ann", "t1")));
 * assertThat(run.appended()).extracting(Event::type).containsOnly("reply.delta", "reply.completed");
 * }</pre>
 */
public final class ConsumerRun {

	private final Consumer consumer;

	private final VirtualClock clock = new VirtualClock();

	private final MemoryStores stores = new MemoryStores(this.clock);

	private final A2Server server;

	private String sessionId = "session-1";

	private int attempt = 1;

	private AbortSignal signal = new AbortSignal();

	private final List<Event> appended = new ArrayList<>();

	private List<NewEvent> returned = List.of();

	private @Nullable Event trigger;

	private ConsumerRun(Contract contract, Consumer consumer) {
		this.consumer = consumer;
		this.server = A2Server.builder()
			.contract(contract)
			.eventStore(this.stores)
			.snapshotStore(this.stores)
			.workStore(this.stores)
			.clock(this.clock)
			.build();
		consumer.check(contract);
	}

	/** A run of {@code consumer} of {@code contract}. */
	public static ConsumerRun of(Contract contract, Consumer consumer) {
		return new ConsumerRun(Objects.requireNonNull(contract, "contract"), Objects.requireNonNull(consumer, "consumer"));
	}

	/** The session the run is in; {@code session-1} by default. */
	public ConsumerRun inSession(String sessionId) {
		this.sessionId = sessionId;
		return this;
	}

	/** Events already in the session before the trigger, appended as pushes. */
	public ConsumerRun given(NewEvent... events) {
		session().append(events);
		return this;
	}

	/** The attempt the run is; 1 by default. */
	public ConsumerRun attempt(int attempt) {
		this.attempt = attempt;
		return this;
	}

	/** The session, in memory. */
	public Session session() {
		return this.server.session(this.consumer.contract(), this.sessionId);
	}

	/** The virtual clock of the session (schedules are relative to it). */
	public VirtualClock clock() {
		return this.clock;
	}

	/** The abort signal of the next run: abort it before the run to see how the code stops. */
	public AbortSignal signal() {
		return this.signal;
	}

	/**
	 * Appends {@code trigger} to the session and builds the context of a run for it, for code that
	 * is not the consumer's handler (e.g. a method of a bean taking the payload and the context).
	 */
	public ConsumerContext contextFor(NewEvent trigger) {
		Event event = session().append(trigger).get(0);
		return context(event);
	}

	/**
	 * Appends {@code trigger} to the session and runs the consumer's code for it.
	 * @return what the code returned
	 */
	public @Nullable Object run(NewEvent trigger) throws Exception {
		return run(contextFor(trigger));
	}

	/**
	 * Runs the code again for the last trigger as its next attempt, as after a crash: what it writes
	 * again has the same derived ids, so a correct consumer adds nothing the second time.
	 * @return what the code returned
	 */
	public @Nullable Object rerun() throws Exception {
		Event trigger = this.trigger;
		if (trigger == null) {
			throw new IllegalStateException("nothing ran yet: call run(trigger) first");
		}
		this.attempt++;
		return run(context(trigger));
	}

	private @Nullable Object run(ConsumerContext context) throws Exception {
		long before = session().history(0, 1).head();
		Object result = this.consumer.handler().run(context);
		this.appended.clear();
		this.appended.addAll(session().history(before, Session.MAX_HISTORY_LIMIT).events());
		this.returned = returnedEvents(result);
		return result;
	}

	/** What the last run appended itself ({@code session().append}), with derived ids and its cause. */
	public List<Event> appended() {
		return List.copyOf(this.appended);
	}

	/** What the last run returned (committed with its finish in a real run). */
	public List<NewEvent> returned() {
		return this.returned;
	}

	/** The tasks the runs scheduled (timed appends and clears), in the order they were scheduled. */
	public List<WorkStore.ScheduledTask> scheduled() {
		return this.stores.scheduled();
	}

	private ConsumerContext context(Event trigger) {
		this.trigger = trigger;
		AbortSignal current = this.signal;
		this.signal = new AbortSignal();
		return new ConsumerContext(trigger, this.attempt, current,
				RunSession.of(session(), this.consumer, trigger, this.attempt));
	}

	private static List<NewEvent> returnedEvents(@Nullable Object result) {
		if (result == null) {
			return List.of();
		}
		if (result instanceof NewEvent event) {
			return List.of(event);
		}
		if (result instanceof Collection<?> events) {
			return events.stream().map(NewEvent.class::cast).toList();
		}
		throw new IllegalStateException("the consumer returned a " + result.getClass().getName()
				+ "; return nothing, a NewEvent or a collection of them");
	}

}
