package dev.a2;

import java.util.Objects;
import java.util.function.BiFunction;

/**
 * Folds a session's events into state. State must serialise to JSON and back with Jackson, because
 * it is snapshotted in PostgreSQL. The fold may return a new state or change and return the one it
 * was given: A2 never hands the same instance to two folds.
 *
 * @param stateType the state's class, used to read snapshots back
 * @param initial the state of a session with no events; copied before each fold
 * @param fold the next state from the current one and an event
 */
public record Reducer<S>(Class<S> stateType, S initial, BiFunction<S, Event, S> fold) {

	/** Checks that no part is missing. */
	public Reducer {
		Objects.requireNonNull(stateType, "stateType");
		Objects.requireNonNull(initial, "initial");
		Objects.requireNonNull(fold, "fold");
	}

	/** A reducer of {@code stateType} from {@code initial}, folding with {@code fold}. */
	public static <S> Reducer<S> of(Class<S> stateType, S initial, BiFunction<S, Event, S> fold) {
		return new Reducer<>(stateType, initial, fold);
	}

}
