package dev.a2;

/**
 * The Micrometer observations A2 records, so that spans appear in any tracer Micrometer Tracing
 * bridges to and timers in any meter registry.
 * <p>
 * Low-cardinality keys (on timers and spans): {@value #CONTRACT}, {@value #CONSUMER},
 * {@value #EVENT_TYPE}, {@value #OUTCOME}. High-cardinality keys (on spans only): {@value #SESSION},
 * {@value #EVENT_INDEX}, {@value #EVENT_ID}, {@value #ATTEMPT}, {@value #LAG}, {@value #AGE}, and on an aborted run
 * {@value #ABORTED_BY} and {@value #ABORTED_BY_INDEX}.
 */
public final class A2Observations {

	/** An append to a session: contract; session. */
	public static final String APPEND = "a2.append";

	/** A drain round of one session on this instance: contract; session. */
	public static final String DRAIN = "a2.drain";

	/** One claim round trip: contract; session. */
	public static final String CLAIM = "a2.claim";

	/** A consumer run for one event: contract, consumer, event type, outcome; session, index, id, attempt, lag, age. */
	public static final String EVENT = "a2.event";

	/** Writing a batch of finished attempts, with the events they returned. */
	public static final String COMMIT = "a2.commit";

	/** An operator's redrive: contract, consumer, outcome ({@code retry} or {@code skip}); session, index. */
	public static final String REDRIVE = "a2.redrive";

	/** A {@code consume} call: contract, consumer; session. */
	public static final String CONSUME = "a2.consume";

	/** A push over HTTP or a socket: contract; session. */
	public static final String PUSH = "a2.push";

	/** A stream or socket subscription, from its start to its end: contract, transport ({@code sse}, {@code socket}); session. */
	public static final String STREAM = "a2.stream";

	/** {@code sse} or {@code socket}. */
	public static final String TRANSPORT = "a2.transport";

	/** Low cardinality: the contract's name. */
	public static final String CONTRACT = "a2.contract";

	/** Low cardinality: the consumer's name. */
	public static final String CONSUMER = "a2.consumer";

	/** Low cardinality: the type of the event a run is for. */
	public static final String EVENT_TYPE = "a2.event.type";

	/**
	 * {@code completed}, {@code failed}, {@code dead_lettered}, {@code superseded} (its claim lapsed or
	 * another attempt took over) or {@code aborted} (an abortOn event or a clear ended it: while it
	 * ran, or before it started when the abort event was in the log first).
	 */
	public static final String OUTCOME = "a2.outcome";

	/** On an aborted run (high cardinality): the type of the event that aborted it, {@code a2.cleared} for a clear. */
	public static final String ABORTED_BY = "a2.aborted.by";

	/** On an aborted run (high cardinality): the index of the event that aborted it. */
	public static final String ABORTED_BY_INDEX = "a2.aborted.by.index";

	/** High cardinality: the session id. */
	public static final String SESSION = "a2.session";

	/** High cardinality: the event's index in its session. */
	public static final String EVENT_INDEX = "a2.event.index";

	/** High cardinality: the event's id. */
	public static final String EVENT_ID = "a2.event.id";

	/** High cardinality: the attempt, 1 on the first try. */
	public static final String ATTEMPT = "a2.attempt";

	/** How far the session's known head is past the event (cursors), in events. */
	public static final String LAG = "a2.lag";

	/** How long after the event was appended its run started, in milliseconds. */
	public static final String AGE = "a2.age";

	private A2Observations() {
	}

}
