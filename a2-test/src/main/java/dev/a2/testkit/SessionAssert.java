package dev.a2.testkit;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.a2.Cause;
import dev.a2.Event;
import dev.a2.Session;
import org.assertj.core.api.AbstractAssert;
import org.assertj.core.api.Assertions;
import org.assertj.core.api.ListAssert;

/** Assertions on a session's events (after its latest clear, as history shows them). */
public final class SessionAssert extends AbstractAssert<SessionAssert, Session> {

	private static final int MAX_EVENTS = Session.MAX_HISTORY_LIMIT;

	SessionAssert(Session session) {
		super(session, SessionAssert.class);
	}

	/** The session's events are of exactly these types, in this order. */
	public SessionAssert hasEventTypes(String... types) {
		List<String> actualTypes = read().stream().map(Event::type).toList();
		if (!actualTypes.equals(List.of(types))) {
			failWithMessage("Expected the events of %s to be of types %s, but they are %s", this.actual, List.of(types),
					actualTypes);
		}
		return this;
	}

	/** The session holds exactly {@code count} events of {@code type}. */
	public SessionAssert hasEventCount(String type, int count) {
		long found = read().stream().filter((e) -> e.type().equals(type)).count();
		if (found != count) {
			failWithMessage("Expected %s event(s) of type '%s' in %s, but found %s: %s", count, type, this.actual, found,
					describe(read()));
		}
		return this;
	}

	/** The session holds an event of {@code type} that {@code consumer} wrote. */
	public SessionAssert hasEventCausedBy(String type, String consumer) {
		if (read().stream().noneMatch((e) -> e.type().equals(type) && e.cause() != null && e.cause().consumer().equals(consumer))) {
			failWithMessage("Expected an event of type '%s' written by consumer '%s' in %s, but the events are %s", type,
					consumer, this.actual, describe(read()));
		}
		return this;
	}

	/**
	 * Nothing a consumer wrote is there twice: no two events of the same consumer for the same trigger
	 * have the same type and payload (a re-run wrote the same effect again under another id).
	 */
	public SessionAssert hasNoDuplicateEffects() {
		Map<List<Object>, List<Event>> byEffect = new HashMap<>();
		for (Event event : read()) {
			Cause cause = event.cause();
			if (cause != null) {
				byEffect.computeIfAbsent(List.of(cause.consumer(), cause.index(), event.type(), Objects.toString(event.payload())),
						(k) -> new ArrayList<>()).add(event);
			}
		}
		List<List<Event>> duplicates = byEffect.values().stream().filter((same) -> same.size() > 1).toList();
		if (!duplicates.isEmpty()) {
			failWithMessage("Expected no effect written twice in %s, but found %s", this.actual,
					duplicates.stream().map(SessionAssert::describe).toList());
		}
		return this;
	}

	/** The session's events (after its latest clear), for assertions of their own. */
	public ListAssert<Event> events() {
		return Assertions.assertThat(read());
	}

	private List<Event> read() {
		return this.actual.history(0, MAX_EVENTS).events();
	}

	private static List<String> describe(List<Event> events) {
		return events.stream()
			.map((e) -> "#" + e.index() + " " + e.type() + " " + e.payload()
					+ ((e.cause() != null) ? " by " + e.cause().consumer() + " (attempt " + e.cause().attempt() + ")" : ""))
			.toList();
	}

}
