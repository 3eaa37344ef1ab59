package dev.a2.chaos;

import java.util.List;

import dev.a2.ConsumerContext;
import dev.a2.NewEvent;
import dev.a2.NonRetriableException;
import dev.a2.chaos.ChaosApplication.EffectRecorded;
import dev.a2.chaos.ChaosApplication.OrderPlaced;
import dev.a2.spring.A2Consumer;

import org.springframework.stereotype.Component;

/**
 * One consumer of each kind, each leaving exactly one {@code effect.recorded} per order it handles:
 * four return it (committed with the unit's completion or the cursor's move), one appends it from the
 * run (made idempotent by its derived id), and one fails where it is told to.
 */
@Component
class OrderConsumers {

	static final String EFFECT = "effect.recorded";

	/**
	 * Takes 50 ms, as a call to another service would: a killed process nearly always has some of these
	 * in flight, whose takeover the harness times.
	 */
	@A2Consumer(contract = "orders", name = "independent", types = "order.placed")
	NewEvent independent(OrderPlaced order, ConsumerContext context) throws InterruptedException {
		Thread.sleep(50);
		return effect("independent", order, context);
	}

	/** Orders of one customer, one after another: the harness checks their effects are in order. */
	@A2Consumer(contract = "orders", name = "keyed", types = "order.placed", laneKey = "#payload.customer()")
	NewEvent keyed(OrderPlaced order, ConsumerContext context) {
		return effect("keyed", order, context);
	}

	/** A cursor per session, walking its orders in order. */
	@A2Consumer(contract = "orders", name = "cursor", types = "order.placed", lane = "cursor")
	NewEvent cursor(OrderPlaced order, ConsumerContext context) {
		return effect("cursor", order, context);
	}

	/**
	 * A second cursor per session, run in batches: its effects commit with the cursor's move past each
	 * batch. Two cursors of one session are finished and renewed together, beside appends to it.
	 */
	@A2Consumer(contract = "orders", name = "batch", types = "order.placed", lane = "batch")
	List<NewEvent> batch(List<ConsumerContext> batch) {
		return batch.stream().map((context) -> effect("batch", context.event().payload(OrderPlaced.class), context)).toList();
	}

	/** Appends at once instead of returning: a re-run after a kill appends the same id, which stores nothing. */
	@A2Consumer(contract = "orders", name = "appender", types = "order.placed")
	void appender(OrderPlaced order, ConsumerContext context) {
		context.session().append("effect", effect("appender", order, context));
	}

	/** Poison fails for good (a dead letter); flaky fails once and succeeds on its retry. */
	@A2Consumer(contract = "orders", name = "picky", types = "order.placed")
	NewEvent picky(OrderPlaced order, ConsumerContext context) {
		if (order.poison()) {
			throw new NonRetriableException("poison order " + context.event().id());
		}
		if (order.flaky() && context.attempt() == 1) {
			throw new IllegalStateException("flaky order " + context.event().id() + " fails its first attempt");
		}
		return effect("picky", order, context);
	}

	private static NewEvent effect(String consumer, OrderPlaced order, ConsumerContext context) {
		return NewEvent.of(EFFECT,
				new EffectRecorded(context.event().id(), context.event().index(), consumer, order.customer()));
	}

}
