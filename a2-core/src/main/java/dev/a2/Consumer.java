package dev.a2;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * A named reader of every session's log of one contract, whose code A2 runs durably: claimed with a
 * lease, retried with back-off, dead-lettered after repeated failure, and with exactly-once effects
 * for the events it writes.
 *
 * <pre>{@code
 * Consumer assistant = Consumer.builder("chat", "assistant")
 *     .types("message.sent")
 *     .lane(Lane.keyed((input) -> input.session()))
 *     .abortOn("stop.requested")
 *     .run((context) -> NewEvent.of("message.sent", reply(context.event())));
 * }</pre>
 */
public final class Consumer {

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,127}");

	private final String contract;

	private final String name;

	private final @Nullable Set<String> types;

	private final Lane lane;

	private final boolean backfill;

	private final List<AbortOn> abortOn;

	private final Handler handler;

	private final @Nullable BatchHandler batchHandler;

	private Consumer(Builder builder, Handler handler, @Nullable BatchHandler batchHandler) {
		this.contract = builder.contract;
		this.name = builder.name;
		this.types = (builder.types != null) ? Set.copyOf(builder.types) : null;
		this.lane = builder.lane;
		this.backfill = builder.backfill;
		this.abortOn = List.copyOf(builder.abortOn);
		this.handler = handler;
		this.batchHandler = batchHandler;
	}

	/**
	 * @param contract the name of the contract whose sessions it reads
	 * @param name 1-128 letters, digits and {@code . _ : -}, starting with a letter or digit, unique
	 * in the contract; names under {@code a2.} are A2's own
	 */
	public static Builder builder(String contract, String name) {
		return new Builder(contract, name);
	}

	/** The contract whose sessions it reads. */
	public String contract() {
		return this.contract;
	}

	/** Its name, unique in the contract. */
	public String name() {
		return this.name;
	}

	/** The event types it takes, or {@code null} for every type. */
	public @Nullable Set<String> types() {
		return this.types;
	}

	/** How its work is ordered. */
	public Lane lane() {
		return this.lane;
	}

	/** Whether a fixed-lane cursor starts at the first event of sessions that existed before it. */
	public boolean backfill() {
		return this.backfill;
	}

	/** The event types (with their predicates) whose arrival aborts a running attempt. */
	public List<AbortOn> abortOn() {
		return this.abortOn;
	}

	/** The code run for one event (a batch consumer's runs its batch code with that one event). */
	public Handler handler() {
		return this.handler;
	}

	/** The code of a consumer that takes a cursor's events in batches, or {@code null}. */
	public @Nullable BatchHandler batchHandler() {
		return this.batchHandler;
	}

	/** Whether an event of this type is a unit of work for it. */
	public boolean takes(String type) {
		return !type.equals(dev.a2.store.EventStore.CLEAR_MARKER) && (this.types == null || this.types.contains(type));
	}

	/**
	 * Checks the definition against its contract (the types it takes and aborts on); the message
	 * names the consumer and the fix. {@link A2Server} checks every consumer it is given.
	 */
	public void check(Contract contractDefinition) {
		if (this.types != null) {
			for (String type : this.types) {
				if (contractDefinition.payloadType(type) == null) {
					throw new IllegalArgumentException("consumer '" + this.name + "' takes type '" + type + "', which contract '"
							+ this.contract + "' does not declare; it has " + contractDefinition.events().keySet());
				}
			}
		}
		for (AbortOn abort : this.abortOn) {
			if (contractDefinition.payloadType(abort.type()) == null) {
				throw new IllegalArgumentException("consumer '" + this.name + "' aborts on type '" + abort.type()
						+ "', which contract '" + this.contract + "' does not declare");
			}
		}
	}

	@Override
	public String toString() {
		return "Consumer[" + this.contract + "/" + this.name + "]";
	}

	/** The code of a consumer. */
	@FunctionalInterface
	public interface Handler {

		/**
		 * Runs for one unit of work. Events it returns (a {@link NewEvent}, a collection of them, or
		 * {@code null} for none) are appended in the transaction that marks the unit done.
		 */
		@Nullable Object run(ConsumerContext context) throws Exception;

	}

	/**
	 * The code of a fixed-lane consumer that takes a claim's events together: a projection that
	 * writes a batch at once. The events it returns, and the cursor's move past the whole batch, commit
	 * in one transaction. When it fails, A2 runs the batch's events again one at a time to find the
	 * event that fails: the events before it complete, and it alone is retried or dead-lettered. A
	 * consumer with {@code abortOn} is given one event at a time, so that each one's start is decided
	 * on its own.
	 */
	@FunctionalInterface
	public interface BatchHandler {

		/** Runs for consecutive events of one session, in index order (one context each). */
		@Nullable Object run(List<ConsumerContext> batch) throws Exception;

	}

	/**
	 * An event type whose arrival later in the same session aborts a run, when the predicate over
	 * (trigger, new event) holds. It is decided against the run's start: a run whose abort event is in
	 * the log already when it is claimed does not start (its unit is done, outcome {@code aborted});
	 * a running attempt is aborted only by an abort event appended after it started. A run that sees
	 * its signal aborted and returns normally has what it returns (an end event of its own) committed
	 * with its unit's end.
	 */
	public record AbortOn(String type, BiPredicate<Event, Event> when) {
	}

	/** Builds a {@link Consumer}; {@link #run(Handler)} checks the definition and builds it. */
	public static final class Builder {

		private final String contract;

		private final String name;

		private @Nullable Set<String> types;

		private Lane lane = Lane.independent();

		private boolean backfill;

		private final List<AbortOn> abortOn = new ArrayList<>();

		private Builder(String contract, String name) {
			this.contract = Objects.requireNonNull(contract, "contract");
			if (name == null || !NAME.matcher(name).matches()) {
				throw new IllegalArgumentException("consumer name '" + name
						+ "' must be 1-128 letters, digits and . _ : - characters, starting with a letter or digit");
			}
			if (name.startsWith(Contract.RESERVED_PREFIX)) {
				throw new IllegalArgumentException("consumer name '" + name + "' starts with 'a2.', which A2 keeps for its own consumers");
			}
			this.name = name;
		}

		/** The event types it takes; leave out for every type. */
		public Builder types(String... types) {
			return types(List.of(types));
		}

		/** The event types it takes; none for every type. */
		public Builder types(List<String> types) {
			if (types.isEmpty()) {
				throw new IllegalArgumentException("consumer '" + this.name + "' lists no types; leave types out to take every type");
			}
			this.types = new LinkedHashSet<>(types);
			return this;
		}

		/** How its work is ordered; {@link Lane#independent()} by default. */
		public Builder lane(Lane lane) {
			this.lane = Objects.requireNonNull(lane, "lane");
			return this;
		}

		/** Start cursors at the first event of sessions that had events before the consumer existed. */
		public Builder backfill(boolean backfill) {
			this.backfill = backfill;
			return this;
		}

		/**
		 * Abort a run when an event of {@code type} follows its event in the session: one there before
		 * the run starts keeps it from starting, one appended while it runs aborts its signal; see
		 * {@link AbortOn}.
		 */
		public Builder abortOn(String type) {
			return abortOn(type, (trigger, arrived) -> true);
		}

		/** Aborts a running attempt when an event of {@code type} arrives later in the session and {@code when} holds for (trigger, arrived). */
		public Builder abortOn(String type, BiPredicate<Event, Event> when) {
			this.abortOn.add(new AbortOn(type, when));
			return this;
		}

		/** The consumer, running {@code handler} for each event. */
		public Consumer run(Handler handler) {
			Objects.requireNonNull(handler, "handler");
			check();
			return new Consumer(this, handler, null);
		}

		/** Takes a cursor's events in batches (fixed lanes only); see {@link BatchHandler}. */
		public Consumer runBatch(BatchHandler handler) {
			Objects.requireNonNull(handler, "handler");
			if (!(this.lane instanceof Lane.Fixed)) {
				throw new IllegalArgumentException("consumer '" + this.name
						+ "' takes batches, so its lane must be a fixed string: lane(Lane.fixed(\"…\"))");
			}
			check();
			return new Consumer(this, (context) -> handler.run(List.of(context)), handler);
		}

		private void check() {
			if (this.backfill && !(this.lane instanceof Lane.Fixed)) {
				throw new IllegalArgumentException("consumer '" + this.name
						+ "' backfills, so its lane must be a fixed string: lane(Lane.fixed(\"…\"))");
			}
			if (this.backfill && !this.abortOn.isEmpty()) {
				throw new IllegalArgumentException("consumer '" + this.name + "' backfills, so it can't use abortOn");
			}
		}

	}

}
