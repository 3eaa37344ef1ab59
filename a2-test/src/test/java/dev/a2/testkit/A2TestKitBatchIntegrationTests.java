package dev.a2.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.a2.Consumer;
import dev.a2.ConsumerContext;
import dev.a2.Contract;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.Session;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static dev.a2.testkit.A2Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

/** The kit's faults on a consumer that takes batches (a fixed lane, docs/consumers.md "Batches"). */
class A2TestKitBatchIntegrationTests {

	record Note(String text) {
	}

	static final Contract LEDGER = Contract.builder("ledger")
		.event("entry.added", Note.class)
		.event("entry.charged", Note.class)
		.event("entry.projected", Note.class)
		.build();

	/** A projection that takes batches: appends a charge for each entry itself, returns a projection of each. */
	static final Consumer PROJECTION = Consumer.builder("ledger", "projection")
		.types("entry.added")
		.lane(Lane.fixed("projection"))
		.runBatch((batch) -> {
			List<NewEvent> out = new ArrayList<>();
			for (ConsumerContext context : batch) {
				String text = context.event().payload(Note.class).text();
				context.session().append("charge", NewEvent.of("entry.charged", new Note(text)));
				out.add(NewEvent.of("entry.projected", new Note(text)));
			}
			return out;
		});

	@RegisterExtension
	static final A2TestExtension a2 = new A2TestExtension((server) -> server.contract(LEDGER).consumer(PROJECTION));

	/** An entry arrives while the instance is frozen: the attempt that takes over runs a longer batch. */
	@Test
	void aStalledBatchGoesOnAsAZombieAfterATakeoverOfALongerBatch(A2TestKit kit) {
		Session session = kit.session("ledger", "stall-1");
		kit.consumer("projection").stallNext();
		session.append(NewEvent.of("entry.added", new Note("a")));
		kit.drain();
		session.append(NewEvent.of("entry.added", new Note("b")));
		kit.drain();

		kit.advance(kit.server().drainSettings().lease().plusSeconds(1));

		assertThat(session).hasEventCount("entry.projected", 2).hasEventCount("entry.charged", 2).hasNoDuplicateEffects();
		assertThat(kit.journal().runs("projection")).extracting(RunRecord::attempt, RunRecord::outcome, RunRecord::stalled)
			.containsExactly(Tuple.tuple(1, RunOutcome.SUPERSEDED, true), Tuple.tuple(2, RunOutcome.COMPLETED, false));
		assertThat(kit.server().drainActivity().running()).as("the zombie still frozen after the takeover").isEmpty();
	}

	/** crashAfterRun on a batch: the effects it appended land once, what it returned lands once, after the lease. */
	@Test
	void aCrashedBatchRunsAgainAndWritesEachEffectOnce(A2TestKit kit) {
		Session session = kit.session("ledger", "crash-1");
		kit.consumer("projection").crashAfterRun();
		session.append(NewEvent.of("entry.added", new Note("a")), NewEvent.of("entry.added", new Note("b")));
		kit.drain();
		assertThat(session).hasEventCount("entry.charged", 2).hasEventCount("entry.projected", 0);

		kit.advance(kit.server().drainSettings().lease().plusSeconds(1));

		assertThat(session).hasEventCount("entry.charged", 2).hasEventCount("entry.projected", 2).hasNoDuplicateEffects();
		assertThat(kit.journal().runs("projection")).extracting(RunRecord::outcome)
			.containsExactly(RunOutcome.CRASHED, RunOutcome.COMPLETED);
	}

	/** A batch that throws is split, which is no failure: the staged failure is the first event's, alone. */
	@Test
	void failNextOnABatchIsAFailureWithABackOff(A2TestKit kit) {
		Session session = kit.session("ledger", "fail-1");
		kit.consumer("projection").failNext(1);
		session.append(NewEvent.of("entry.added", new Note("a")), NewEvent.of("entry.added", new Note("b")));

		kit.advance(Duration.ofMinutes(1));

		assertThat(kit.journal().runs("projection")).extracting(RunRecord::index, RunRecord::outcome)
			.containsExactly(Tuple.tuple(2L, RunOutcome.SPLIT), Tuple.tuple(1L, RunOutcome.FAILED),
					Tuple.tuple(2L, RunOutcome.COMPLETED));
		assertThat(kit.journal().backOffs("projection")).containsExactly(Duration.ofSeconds(1));
		assertThat(session).hasEventCount("entry.projected", 2).hasEventCount("entry.charged", 2).hasNoDuplicateEffects();
	}

	@Test
	void failNextAsOftenAsTheMostFailuresDeadLettersABatchsFirstEvent(A2TestKit kit) {
		Session session = kit.session("ledger", "dead-1");
		kit.consumer("projection").failNext(kit.server().drainSettings().maxFailures());
		session.append(NewEvent.of("entry.added", new Note("a")), NewEvent.of("entry.added", new Note("b")));

		kit.advanceThroughDue(Duration.ofHours(1));

		assertThat(kit).hasDeadLetter("projection", "dead-1", 1);
		assertThat(kit.journal().runs("projection")).filteredOn((run) -> run.outcome() == RunOutcome.FAILED)
			.hasSize(kit.server().drainSettings().maxFailures() - 1);
	}

}
