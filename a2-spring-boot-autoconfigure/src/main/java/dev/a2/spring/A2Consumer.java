package dev.a2.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a method of a Spring bean an A2 consumer: A2 runs it durably for each matching event of
 * every session of the contract.
 * <p>
 * The method takes a {@link dev.a2.ConsumerContext}, the event's payload (its type must fit every
 * type the consumer takes), or both; it returns nothing, a {@link dev.a2.NewEvent}, a collection
 * of them, or a {@code Mono}, {@code Flux} or {@code CompletionStage} of those. Returned events are
 * appended in the transaction that marks the unit done.
 *
 * <pre>{@code
 * @A2Consumer(contract = "chat", name = "assistant", types = "message.sent", laneKey = "#session",
 *         abortOn = "stop.requested")
 * NewEvent reply(MessageSent message, ConsumerContext context) { … }
 * }</pre>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface A2Consumer {

	/** The contract whose sessions it reads. */
	String contract();

	/**
	 * Its name, unique in the contract: 1-128 letters, digits and {@code . _ : -}. Keep it stable:
	 * the ids of the events it writes are derived from it.
	 */
	String name();

	/** The event types it takes; none for every type. */
	String[] types() default {};

	/** A fixed lane: one cursor per session that walks its types in order, like a projection. */
	String lane() default "";

	/**
	 * A keyed lane: a SpEL expression computing each event's key from {@code #session} (the session
	 * id), {@code #type}, {@code #id} and {@code #payload}; units of a session with the same key run one
	 * after another (a key orders nothing across sessions). A {@code null} key means independent.
	 * Example: {@code "#payload.author()"}.
	 */
	String laneKey() default "";

	/** With a fixed lane: start at the first event of sessions that existed before the consumer. */
	boolean backfill() default false;

	/**
	 * Event types whose arrival later in the session aborts a running attempt; one already in the log
	 * when the run is claimed keeps it from starting (it is recorded as aborted).
	 */
	String[] abortOn() default {};

	/**
	 * With {@code abortOn}: a SpEL condition an abortOn event must meet to abort, over {@code #trigger}
	 * (the event of the run) and {@code #event} (the abort event), both {@link dev.a2.Event}s. Example:
	 * {@code "#event.payload.reply == #trigger.id"} stops only the answer the stop names. Empty: every
	 * abortOn event aborts the runs of the events before it.
	 */
	String abortWhen() default "";

}
