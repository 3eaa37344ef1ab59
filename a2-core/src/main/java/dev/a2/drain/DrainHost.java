package dev.a2.drain;

import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

import dev.a2.A2Exception;
import dev.a2.AbortSignal;
import dev.a2.Cause;
import dev.a2.Consumer;
import dev.a2.Event;
import dev.a2.live.SessionChanges;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;
import dev.a2.store.WorkStore.ScheduledTask;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * What the drain engine needs of the server it runs for, and nothing more. Internal: implemented by
 * {@link dev.a2.A2Server}'s side of the bridge, not by applications.
 */
public interface DrainHost {

	Clock clock();

	ObservationRegistry observations();

	SessionChanges changes();

	List<Consumer> consumers();

	/** The names of the contracts the server registers (whose scheduled tasks it delivers). */
	Collection<String> contracts();

	@Nullable Consumer consumer(String contract, String name);

	/** A stored event with its payload bound to the contract's type. */
	Event decode(String contract, StoredEvent stored);

	/** Raw events with {@code after < index <= through}, in index order. */
	List<StoredEvent> range(String contract, String session, long after, long through, int limit);

	/** The session's last index. */
	long head(String contract, String session);

	/** The index of the session's latest clear marker (0 when it was never cleared). */
	long clearedAt(String contract, String session);

	/**
	 * Runs the consumer on one event of a claim, and answers the events it returned, with their
	 * derived ids and ready to store (also when the attempt was aborted meanwhile: whether they are
	 * stored is the drain engine's decision).
	 */
	List<EventToStore> run(Consumer consumer, String session, Event event, int attempt, int failures, AbortSignal signal,
			Cause cause) throws Exception;

	/**
	 * Runs a batch consumer on consecutive events of a claim at once, and answers the events it
	 * returned, ready to store, caused by the batch's last event (also when aborted meanwhile).
	 */
	List<EventToStore> runBatch(Consumer consumer, String session, List<Event> events, int attempt, int failures,
			AbortSignal signal, List<Cause> causes) throws Exception;

	/** Delivers a due scheduled task, in the transaction that took it. */
	void deliver(ScheduledTask task);

	AbortSignal newSignal();

	void abort(AbortSignal signal, A2Exception reason);

	/**
	 * The attempt's claim is held until {@code until}: its run's appends after it renew the claim first
	 * with {@code renew} ({@code null}: the one given before), and are refused when it was taken over.
	 */
	void holdUntil(AbortSignal signal, Instant until, @Nullable Supplier<@Nullable Instant> renew);

	/** Binds the signal to the thread running the attempt (interrupted on abort), or unbinds it. */
	void bind(AbortSignal signal, @Nullable Thread thread);

}
