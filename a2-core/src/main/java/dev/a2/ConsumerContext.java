package dev.a2;

/**
 * What a consumer run receives: the triggering event, the attempt, the abort signal and the session.
 */
public final class ConsumerContext {

	private final Event event;

	private final int attempt;

	private final AbortSignal signal;

	private final RunSession session;

	/**
	 * The context of a run. A2 builds it for every run; a unit test of a consumer's code builds one
	 * itself, with {@link RunSession#of} (the test kit's {@code ConsumerRun} does it on stores in memory).
	 */
	public ConsumerContext(Event event, int attempt, AbortSignal signal, RunSession session) {
		this.event = event;
		this.attempt = attempt;
		this.signal = signal;
		this.session = session;
	}

	/** The event this unit of work is for. */
	public Event event() {
		return this.event;
	}

	/** 1 on the first try; each new claim of the unit counts one more. */
	public int attempt() {
		return this.attempt;
	}

	/** Aborted when this attempt should stop; see {@link AbortSignal}. */
	public AbortSignal signal() {
		return this.signal;
	}

	/** The session of the event, as seen from this run. */
	public RunSession session() {
		return this.session;
	}

	/**
	 * The consumer whose run this is. Code shared by several consumers reads what they were declared
	 * with: a2-spring-ai's {@code ReplyStream} tells a Stop (an event of the consumer's
	 * {@code abortOn}) from a message to answer, and which reply it stops, by the consumer's own
	 * {@link Consumer#abortOn()}.
	 */
	public Consumer consumer() {
		return this.session.consumer();
	}

	/**
	 * A key for an effect of this run outside A2, such as a payment provider's idempotency key or the
	 * unique key of a row in the application's own table: the same at every attempt of this unit of
	 * work (a retry, a takeover after a crash, a redrive), so the other side can drop a repeat, and
	 * different for every other contract, session, trigger, consumer and {@code effect}. The trigger's
	 * id alone is no such key: an id is unique within its session only, and the ids of the events
	 * consumers write, derived from their trigger's, repeat in every session. A name-based UUID
	 * (version 5), 36 characters.
	 * @param effect what the effect is ({@code "charge"}, {@code "refund"}), so that two effects of one
	 * run have two keys
	 */
	public String effectKey(String effect) {
		Consumer consumer = consumer();
		return DerivedIds.effect(consumer.contract(), this.session.id(), this.event.id(), consumer.name(), effect);
	}

}
