package dev.a2;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

import dev.a2.drain.DrainHost;
import dev.a2.live.SessionChanges;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;
import dev.a2.store.WorkStore.ScheduledTask;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The server's side of the bridge to the drain engine: what {@link dev.a2.drain.Drainer} may use of
 * the server, so that the server's internals stay package-private.
 */
final class ServerDrainHost implements DrainHost {

	private final A2Server server;

	ServerDrainHost(A2Server server) {
		this.server = server;
	}

	@Override
	public Clock clock() {
		return this.server.clock();
	}

	@Override
	public ObservationRegistry observations() {
		return this.server.observations;
	}

	@Override
	public SessionChanges changes() {
		return this.server.changes;
	}

	@Override
	public List<Consumer> consumers() {
		return this.server.consumers();
	}

	@Override
	public Collection<String> contracts() {
		return this.server.contracts().stream().map(Contract::name).toList();
	}

	@Override
	public @Nullable Consumer consumer(String contract, String name) {
		return this.server.consumer(contract, name);
	}

	@Override
	public Event decode(String contract, StoredEvent stored) {
		return this.server.payloads.event(this.server.contract(contract), stored);
	}

	@Override
	public List<StoredEvent> range(String contract, String session, long after, long through, int limit) {
		return this.server.events.range(contract, session, after, through, limit);
	}

	@Override
	public long head(String contract, String session) {
		return this.server.events.head(contract, session).lastIndex();
	}

	@Override
	public long clearedAt(String contract, String session) {
		return this.server.events.head(contract, session).clearedAt();
	}

	@Override
	public List<EventToStore> run(Consumer consumer, String session, Event event, int attempt, int failures,
			AbortSignal signal, Cause cause) throws Exception {
		Session log = this.server.session(consumer.contract(), session);
		ConsumerContext context = new ConsumerContext(event, attempt, signal, new RunSession(log, consumer, event, cause, signal));
		Object result = intercepted(new Invocation(consumer, session, List.of(event), attempt, failures, signal,
				() -> consumer.handler().run(context)));
		// also when aborted: the drain engine commits what an aborted run returned only for an abortOn
		return log.prepare(derivedIds(returnedEvents(result, consumer), event, consumer), cause, true);
	}

	@Override
	public List<EventToStore> runBatch(Consumer consumer, String session, List<Event> events, int attempt, int failures,
			AbortSignal signal, List<Cause> causes) throws Exception {
		Session log = this.server.session(consumer.contract(), session);
		List<ConsumerContext> batch = new ArrayList<>(events.size());
		for (int i = 0; i < events.size(); i++) {
			batch.add(new ConsumerContext(events.get(i), attempt, signal, new RunSession(log, consumer, events.get(i), causes.get(i), signal)));
		}
		Object result = intercepted(new Invocation(consumer, session, events, attempt, failures, signal,
				() -> consumer.batchHandler().run(batch)));
		Event last = events.get(events.size() - 1);
		return log.prepare(derivedIds(returnedEvents(result, consumer), last, consumer), causes.get(causes.size() - 1), true);
	}

	/** Runs the code through the server's interceptors; an abandoned attempt ends as if its instance died. */
	private @Nullable Object intercepted(Invocation invocation) throws Exception {
		Object result = invocation.proceed();
		if (invocation.abandoned) {
			invocation.signal.abort(new A2Exception(ErrorCode.CLAIM_EXPIRED,
					"the attempt was abandoned as if its instance died; its lease lapses and another attempt runs the unit"));
		}
		return result;
	}

	@Override
	public void deliver(ScheduledTask task) {
		this.server.deliver(task);
	}

	@Override
	public AbortSignal newSignal() {
		return new AbortSignal();
	}

	@Override
	public void abort(AbortSignal signal, A2Exception reason) {
		signal.abort(reason);
	}

	@Override
	public void holdUntil(AbortSignal signal, Instant until, @Nullable Supplier<@Nullable Instant> renew) {
		signal.holdUntil(until, renew);
	}

	@Override
	public void bind(AbortSignal signal, @Nullable Thread thread) {
		signal.bind(thread);
	}

	/** A run going through the interceptors, outermost first, and then the consumer's code. */
	private final class Invocation implements RunInterceptor.Invocation {

		private final Consumer consumer;

		private final String session;

		private final List<Event> events;

		private final int attempt;

		private final int failures;

		private final AbortSignal signal;

		private final Callable<@Nullable Object> code;

		private int next;

		private volatile boolean abandoned;

		Invocation(Consumer consumer, String session, List<Event> events, int attempt, int failures, AbortSignal signal,
				Callable<@Nullable Object> code) {
			this.consumer = consumer;
			this.session = session;
			this.events = List.copyOf(events);
			this.attempt = attempt;
			this.failures = failures;
			this.signal = signal;
			this.code = code;
		}

		@Override
		public Consumer consumer() {
			return this.consumer;
		}

		@Override
		public String session() {
			return this.session;
		}

		@Override
		public List<Event> events() {
			return this.events;
		}

		@Override
		public int attempt() {
			return this.attempt;
		}

		@Override
		public int failures() {
			return this.failures;
		}

		@Override
		public AbortSignal signal() {
			return this.signal;
		}

		@Override
		public @Nullable Object proceed() throws Exception {
			List<RunInterceptor> interceptors = ServerDrainHost.this.server.interceptors;
			if (this.next < interceptors.size()) {
				RunInterceptor interceptor = interceptors.get(this.next++);
				return interceptor.intercept(this);
			}
			return this.code.call();
		}

		@Override
		public void abandon() {
			this.abandoned = true;
		}

	}

	private static List<NewEvent> returnedEvents(@Nullable Object result, Consumer consumer) {
		if (result == null) {
			return List.of();
		}
		if (result instanceof NewEvent event) {
			return List.of(event);
		}
		if (result instanceof Collection<?> collection) {
			List<NewEvent> events = new ArrayList<>(collection.size());
			for (Object item : collection) {
				if (!(item instanceof NewEvent event)) {
					throw new IllegalStateException("consumer '" + consumer.name() + "' returned a collection holding a "
							+ ((item != null) ? item.getClass().getName() : "null") + "; return NewEvent instances");
				}
				events.add(event);
			}
			return events;
		}
		throw new IllegalStateException("consumer '" + consumer.name() + "' returned a " + result.getClass().getName()
				+ "; return nothing, a NewEvent or a collection of them");
	}
	private static List<NewEvent> derivedIds(List<NewEvent> events, Event trigger, Consumer consumer) {
		List<NewEvent> withIds = new ArrayList<>(events.size());
		for (int i = 0; i < events.size(); i++) {
			NewEvent event = events.get(i);
			String id = (event.id() != null) ? event.id() : DerivedIds.returnedEvent(trigger.id(), i, consumer.name());
			withIds.add(new NewEvent(event.type(), event.payload(), id));
		}
		return withIds;
	}

}
