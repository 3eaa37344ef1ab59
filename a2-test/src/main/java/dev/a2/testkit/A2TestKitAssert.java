package dev.a2.testkit;

import java.util.List;

import dev.a2.store.DeadLetter;
import org.assertj.core.api.AbstractAssert;
import org.assertj.core.api.Assertions;
import org.assertj.core.api.ListAssert;

/** Assertions on what the drainer did and what waits. */
public final class A2TestKitAssert extends AbstractAssert<A2TestKitAssert, A2TestKit> {

	A2TestKitAssert(A2TestKit kit) {
		super(kit, A2TestKitAssert.class);
	}

	/**
	 * Nothing runs and nothing is runnable at the virtual now: every unit is done, dead-lettered, or
	 * waits for a later instant (a back-off, a schedule).
	 */
	public A2TestKitAssert isQuiet() {
		boolean idle = this.actual.server().drainActivity().idle();
		if (!idle || !this.actual.runnable().isEmpty()) {
			failWithMessage("%s", this.actual.report("Expected the drainer to be quiet, but it is not"));
		}
		return this;
	}

	/**
	 * A unit of {@code consumer} ({@code "contract/name"}, or the name alone) for the event at
	 * {@code index} of {@code session} is dead-lettered.
	 */
	public A2TestKitAssert hasDeadLetter(String consumer, String session, long index) {
		List<DeadLetter> dead = deadLetterList();
		if (dead.stream()
			.noneMatch((d) -> ConsumerName.matches(consumer, d.contract(), d.consumer()) && d.session().equals(session)
					&& d.index() == index)) {
			failWithMessage("Expected a dead letter of consumer '%s' at event %s of session '%s', but the dead letters are %s",
					consumer, index, session, dead);
		}
		return this;
	}

	/** This test made no dead letter (those of the class's earlier tests, stored in its schema, are not its). */
	public A2TestKitAssert hasNoDeadLetters() {
		List<DeadLetter> dead = deadLetterList();
		if (!dead.isEmpty()) {
			failWithMessage("Expected no dead letters, but found %s", dead);
		}
		return this;
	}

	/** The dead letters this test made, newest first, for assertions of their own. */
	public ListAssert<DeadLetter> deadLetters() {
		return Assertions.assertThat(deadLetterList());
	}

	/** The journal's runs, in the order they started. */
	public ListAssert<RunRecord> runs() {
		return Assertions.assertThat(this.actual.journal().runs());
	}

	/** The runs of one consumer, in the order they started. */
	public ListAssert<RunRecord> runs(String consumer) {
		return Assertions.assertThat(this.actual.journal().runs(consumer));
	}

	private List<DeadLetter> deadLetterList() {
		return this.actual.deadLetters();
	}

}
