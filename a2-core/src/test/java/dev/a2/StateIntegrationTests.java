package dev.a2;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Random;

import javax.sql.DataSource;

import dev.a2.TestContracts.Transcript;
import dev.a2.test.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static dev.a2.TestContracts.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(PostgresExtension.class)
class StateIntegrationTests {

	private final DataSource dataSource;

	StateIntegrationTests(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	@Test
	void stateOfASessionNeverWrittenIsTheInitialState() {
		Session session = server(10, 100).session("chat", A2TestSupport.newSessionId());
		assertThat(session.state("count")).isEqualTo(new SessionState<>(0, 0));
		assertThat(session.state("transcript", Transcript.class).state().lines()).isEmpty();
	}

	@Test
	void stateEqualsAFullFoldAtRandomPoints() {
		Session session = server(7, 100).session("chat", A2TestSupport.newSessionId());
		Random random = new Random(42);
		List<String> expected = new ArrayList<>();
		for (int i = 1; i <= 300; i++) {
			session.append((random.nextInt(4) == 0) ? NewEvent.of("note", new TestContracts.Note("n")) : message("m" + i));
		}
		List<Event> log = new ArrayList<>();
		for (long after = 0; after < 300; after += 100) {
			log.addAll(session.history(after, 100).events());
		}
		// a fresh server for each kind of read, so neither the cache nor earlier snapshots decide alone
		for (A2Server server : List.of(server(7, 100), server(7, 0), server(1000, 0))) {
			Session reader = server.session("chat", session.id());
			for (int probe = 0; probe < 15; probe++) {
				long through = random.nextInt(320);
				Transcript folded = fold(log, through);
				SessionState<?> state = reader.state("transcript", through);
				assertThat(state.index()).isEqualTo(Math.min(through, 300));
				assertThat(state.state()).as("state through %d", through).isEqualTo(folded);
			}
			assertThat(reader.state("transcript").state()).isEqualTo(fold(log, 300));
			assertThat(reader.state("count").state()).isEqualTo(300);
		}
	}

	@Test
	void readsFoldOnlyTheTailAfterASnapshot() {
		Session session = server(10, 0).session("chat", A2TestSupport.newSessionId());
		for (int i = 0; i < 95; i++) {
			session.append(message("m"));
		}
		int before = TestContracts.folds.get();
		assertThat(session.state("count").state()).isEqualTo(95);
		assertThat(TestContracts.folds.get() - before).isEqualTo(95);
		assertThat(snapshotIndexes(session.id(), "count")).containsExactly(10L, 20L, 30L, 40L, 50L, 60L, 70L, 80L, 90L);

		// no cache: the next read starts at the snapshot of 90
		before = TestContracts.folds.get();
		assertThat(server(10, 0).session("chat", session.id()).state("count").state()).isEqualTo(95);
		assertThat(TestContracts.folds.get() - before).isEqualTo(5);

		before = TestContracts.folds.get();
		assertThat(server(10, 0).session("chat", session.id()).state("count", 42).state()).isEqualTo(42);
		assertThat(TestContracts.folds.get() - before).isEqualTo(2);
	}

	@Test
	void cachedStateSavesTheSnapshotReadAndIsNeverSharedWithTheCaller() {
		A2Server server = server(1000, 100);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("a"), message("b"));
		Transcript first = session.state("transcript", Transcript.class).state();
		first.lines().add("changed by the caller");

		session.append(message("c"));
		int before = TestContracts.folds.get();
		assertThat(session.state("transcript", Transcript.class).state().lines()).containsExactly("1:a", "2:b", "3:c");
		assertThat(session.state("count").state()).isEqualTo(3);
		assertThat(TestContracts.folds.get() - before).as("count folded from its start, transcript from the cache").isEqualTo(3);
		before = TestContracts.folds.get();
		assertThat(session.state("count").state()).isEqualTo(3);
		assertThat(TestContracts.folds.get() - before).isZero();
	}

	@Test
	void clearStartsStateOverAndThroughBeforeTheClearSeesTheOldState() {
		A2Server server = server(2, 100);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("a"), message("b"), message("c"));
		assertThat(session.state("count").state()).isEqualTo(3);
		long marker = session.clear();
		assertThat(session.state("count")).isEqualTo(new SessionState<>(marker, 0));
		session.append(message("d"));

		assertThat(session.state("count")).isEqualTo(new SessionState<>(5L, 1));
		assertThat(session.state("transcript", Transcript.class).state().lines()).containsExactly("5:d");
		assertThat(session.state("count", 2).state()).isEqualTo(2);
		assertThat(server(2, 0).session("chat", session.id()).state("count").state()).isEqualTo(1);
		assertThat(snapshotIndexes(session.id(), "count")).allSatisfy((index) -> assertThat(index).isGreaterThan(marker));
	}

	@Test
	void snapshottedAndCachedStateEqualsStateFoldedFromScratchAcrossClears() {
		Session session = server(3, 100).session("chat", A2TestSupport.newSessionId());
		Session scratch = A2TestSupport.server(this.dataSource)
			.snapshotEvery(100_000)
			.stateCacheSize(0)
			.build()
			.session("chat", session.id());
		int n = 0;
		for (int round = 0; round < 4; round++) {
			session.append(message("m" + n++), TestContracts.note("x"), message("m" + n++), message("m" + n++));
			assertThat(session.state("transcript").state()).isEqualTo(scratch.state("transcript").state());
			session.append(message("m" + n++));
			if (round == 1) {
				session.clear();
			}
			for (long through = 0; through <= session.history(0, 1).head(); through++) {
				assertThat(session.state("transcript", through)).as("through %d", through)
					.isEqualTo(scratch.state("transcript", through));
				assertThat(session.state("count", through)).isEqualTo(scratch.state("count", through));
			}
		}
	}

	@Test
	void stateReadInATransactionThatRollsBackShowsNothingOfItToLaterReads() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		A2Server server = A2TestSupport.server(this.dataSource).transactionManager(transactions.getTransactionManager()).build();
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("committed"));

		// an application service appends, reads the new state to answer, then fails
		assertThatThrownBy(() -> transactions.executeWithoutResult((status) -> {
			session.append(message("rolled back"));
			assertThat(session.state("transcript", Transcript.class).state().lines()).containsExactly("1:committed",
					"2:rolled back");
			throw new IllegalStateException("the application fails after appending");
		})).hasMessage("the application fails after appending");
		session.append(message("committed again"));

		assertThat(session.state("transcript", Transcript.class)).isEqualTo(
				new SessionState<>(2, new Transcript(List.of("1:committed", "2:committed again"))));
		assertThat(session.state("count").state()).isEqualTo(2);
	}

	@Test
	void aClearCommittedInATransactionDeletesTheSnapshotsBeforeIt() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		A2Server server = A2TestSupport.server(this.dataSource)
			.transactionManager(transactions.getTransactionManager())
			.snapshotEvery(2)
			.build();
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("a"), message("b"), message("c"), message("d"));
		assertThat(session.state("count").state()).isEqualTo(4);
		assertThat(snapshotIndexes(session.id(), "count")).containsExactly(2L, 4L);

		transactions.executeWithoutResult((status) -> session.clear());

		assertThat(snapshotIndexes(session.id(), "count")).isEmpty();
		assertThat(session.state("count").state()).isEqualTo(0);
	}

	public record Vote(String option) {
	}

	public record Poll(LinkedHashMap<String, Integer> votes) {
	}

	/**
	 * §8: a read from a snapshot answers the state a fold from the start gives, down to the order of a
	 * map's keys: a poll lists its options in the order they were first voted for, on every instance.
	 */
	@Test
	void stateReadFromASnapshotKeepsTheOrderOfAMapsKeys() {
		Contract polls = Contract.builder("polls")
			.event("vote", Vote.class)
			.reducer("poll", Reducer.of(Poll.class, new Poll(new LinkedHashMap<>()), (poll, event) -> {
				poll.votes().merge(event.payload(Vote.class).option(), 1, Integer::sum);
				return poll;
			}))
			.build();
		A2Server server = A2Server.builder().dataSource(this.dataSource).contract(polls).snapshotEvery(3).stateCacheSize(0).build();
		Session session = server.session("polls", A2TestSupport.newSessionId());
		session.append(NewEvent.of("vote", new Vote("pizza")), NewEvent.of("vote", new Vote("cola")),
				NewEvent.of("vote", new Vote("garlic bread")));

		Poll folded = session.state("poll", Poll.class).state();
		assertThat(snapshotIndexes(session.id(), "poll")).containsExactly(3L);
		Poll fromSnapshot = session.state("poll", Poll.class).state();
		assertThat(folded.votes().keySet()).containsExactly("pizza", "cola", "garlic bread");
		assertThat(fromSnapshot.votes().keySet()).containsExactly("pizza", "cola", "garlic bread");
	}

	private A2Server server(int snapshotEvery, int cacheSize) {
		return A2TestSupport.server(this.dataSource).snapshotEvery(snapshotEvery).stateCacheSize(cacheSize).build();
	}

	private List<Long> snapshotIndexes(String session, String reducer) {
		return JdbcClient.create(this.dataSource)
			.sql("SELECT idx FROM a2_state_snapshot WHERE session_id = ? AND reducer = ? ORDER BY idx")
			.params(session, reducer)
			.query(Long.class)
			.list();
	}

	private static Transcript fold(List<Event> log, long through) {
		Transcript transcript = new Transcript(new ArrayList<>());
		for (Event event : log) {
			if (event.index() <= through && event.payload() instanceof TestContracts.MessageSent sent) {
				transcript.lines().add(event.index() + ":" + sent.text());
			}
		}
		return transcript;
	}

}
