package dev.a2;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

import javax.sql.DataSource;

import dev.a2.TestContracts.MessageSent;
import dev.a2.test.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import static dev.a2.TestContracts.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(PostgresExtension.class)
class AppendIntegrationTests {

	private final DataSource dataSource;

	private final A2Server a2;

	private final ExecutorService executor = Executors.newFixedThreadPool(8);

	AppendIntegrationTests(DataSource dataSource) {
		this.dataSource = dataSource;
		this.a2 = A2TestSupport.server(dataSource).build();
	}

	@AfterEach
	void stopExecutor() throws InterruptedException {
		this.executor.shutdownNow();
		this.executor.awaitTermination(10, TimeUnit.SECONDS);
	}

	@Test
	void appendAssignsContiguousIndexesAndAnswersTheStoredEvents() {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		List<Event> first = session.append(message("hello", "m-1"));
		List<Event> batch = session.append(message("two"), message("three"), NewEvent.of("note", new TestContracts.Note("n")));

		assertThat(first).singleElement().satisfies((event) -> {
			assertThat(event.index()).isEqualTo(1);
			assertThat(event.id()).isEqualTo("m-1");
			assertThat(event.type()).isEqualTo("message.sent");
			assertThat(event.payload(MessageSent.class)).isEqualTo(new MessageSent("hello", "ann"));
			assertThat(event.clearIndex()).isZero();
			assertThat(event.cause()).isNull();
			assertThat(event.createdAt()).isNotNull();
		});
		assertThat(batch).extracting(Event::index).containsExactly(2L, 3L, 4L);
		assertThat(batch).extracting(Event::id).doesNotContainNull().doesNotHaveDuplicates();
		assertThat(session.history(0, 100).events()).containsExactlyElementsOf(concat(first, batch));
	}

	@Test
	void payloadsGivenAsMapsOrJsonBindToTheContractType() {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		List<Event> events = session.append(NewEvent.of("message.sent", java.util.Map.of("text", "from a map", "author", "bo")));
		assertThat(events.get(0).payload()).isEqualTo(new MessageSent("from a map", "bo"));
	}

	@Test
	void eightWritersOnOneSessionGetEveryIndexOnce() throws Exception {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		List<Callable<List<Long>>> writers = new ArrayList<>();
		for (int w = 0; w < 8; w++) {
			int writer = w;
			writers.add(() -> {
				List<Long> indexes = new ArrayList<>();
				int written = 0;
				while (written < 1000) {
					// batches of 1 to 5 events, so single appends and batches interleave
					int size = Math.min(1000 - written, ThreadLocalRandom.current().nextInt(1, 6));
					List<NewEvent> batch = IntStream.range(0, size)
						.mapToObj((i) -> message("w" + writer))
						.toList();
					List<Event> stored = session.append(batch);
					for (int i = 1; i < stored.size(); i++) {
						assertThat(stored.get(i).index()).isEqualTo(stored.get(i - 1).index() + 1);
					}
					stored.forEach((event) -> indexes.add(event.index()));
					written += size;
				}
				// a writer's appends land in the order it made them, however they were grouped
				assertThat(indexes).isSorted();
				return indexes;
			});
		}
		List<Long> all = new ArrayList<>();
		for (Future<List<Long>> result : this.executor.invokeAll(writers)) {
			all.addAll(result.get());
		}
		Collections.sort(all);
		assertThat(all).containsExactlyElementsOf(LongStream.rangeClosed(1, 8000).boxed().toList());
		assertThat(A2TestSupport.rows(this.dataSource, session.id())).isEqualTo(8000);
		assertThat(session.history(7990, 100).head()).isEqualTo(8000);
	}

	@Test
	void retriedBatchAnswersTheSameIndexesAndStoresNothingNew() {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		session.append(message("before"));
		List<Event> first = session.append(message("a", "id-a"), message("b", "id-b"));
		List<Event> retried = session.append(message("a", "id-a"), message("b", "id-b"));

		assertThat(retried).isEqualTo(first);
		assertThat(A2TestSupport.rows(this.dataSource, session.id())).isEqualTo(3);
	}

	@Test
	void retryThatChangedThePayloadAnswersWhatWasStored() {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		session.append(message("original", "id-a"));
		List<Event> retried = session.append(message("changed", "id-a"));
		assertThat(retried.get(0).payload(MessageSent.class).text()).isEqualTo("original");
	}

	@Test
	void aSingleEventRetriedAfterOthersAnswersItsIndexAndLeavesNoGap() {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		Event original = session.append(message("a", "id-a")).get(0);
		session.append(message("b"));
		Event retried = session.append(message("a", "id-a")).get(0);

		assertThat(retried).isEqualTo(original);
		assertThat(session.append(message("c")).get(0).index()).isEqualTo(3);
		assertThat(session.history(0, 100).events()).extracting(Event::index).containsExactly(1L, 2L, 3L);
	}

	@Test
	void batchMixingStoredAndNewIdsAppendsOnlyTheNewWithoutAGap() {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		session.append(message("a", "id-a"), message("b", "id-b"));
		List<Event> mixed = session.append(message("c", "id-c"), message("a", "id-a"), message("d", "id-d"));

		assertThat(mixed).extracting(Event::id).containsExactly("id-c", "id-a", "id-d");
		assertThat(mixed).extracting(Event::index).containsExactly(3L, 1L, 4L);
		assertThat(session.history(0, 100).events()).extracting(Event::index).containsExactly(1L, 2L, 3L, 4L);
		assertThat(session.append(message("e")).get(0).index()).isEqualTo(5);
	}

	@Test
	void concurrentRetriesOfOneBatchStoreItOnce() throws Exception {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		for (int round = 0; round < 20; round++) {
			List<NewEvent> batch = List.of(message("x", "r" + round + "-1"), message("y", "r" + round + "-2"));
			List<Callable<List<Event>>> pushes = Collections.nCopies(8, () -> session.append(batch));
			List<List<Long>> answers = new ArrayList<>();
			for (Future<List<Event>> answer : this.executor.invokeAll(pushes)) {
				answers.add(answer.get().stream().map(Event::index).toList());
			}
			assertThat(answers).allSatisfy((indexes) -> assertThat(indexes).isEqualTo(answers.get(0)));
		}
		assertThat(A2TestSupport.rows(this.dataSource, session.id())).isEqualTo(40);
		assertThat(session.history(0, 1000).events()).extracting(Event::index)
			.containsExactlyElementsOf(LongStream.rangeClosed(1, 40).boxed().toList());
	}

	@Test
	void concurrentRetriesThroughTwoInstancesStoreTheBatchOnceWithoutAGap() throws Exception {
		// each instance groups its own appends; between instances the same ids race in the database
		A2Server other = A2TestSupport.server(this.dataSource).build();
		String id = A2TestSupport.newSessionId();
		List<Session> instances = List.of(this.a2.session("chat", id), other.session("chat", id));
		for (int round = 0; round < 20; round++) {
			List<NewEvent> batch = List.of(message("x", "r" + round + "-1"), message("y", "r" + round + "-2"));
			List<Callable<List<Long>>> pushes = IntStream.range(0, 8)
				.<Callable<List<Long>>>mapToObj((i) -> () -> instances.get(i % 2).append(batch).stream().map(Event::index).toList())
				.toList();
			List<List<Long>> answers = new ArrayList<>();
			for (Future<List<Long>> answer : this.executor.invokeAll(pushes)) {
				answers.add(answer.get());
			}
			assertThat(answers).allSatisfy((indexes) -> assertThat(indexes).isEqualTo(answers.get(0)));
		}
		assertThat(A2TestSupport.rows(this.dataSource, id)).isEqualTo(40);
		assertThat(instances.get(0).history(0, 1000).events()).extracting(Event::index)
			.containsExactlyElementsOf(LongStream.rangeClosed(1, 40).boxed().toList());
	}

	@Test
	void aPoolWithoutAutoCommitStillCommitsEveryAppend() {
		DataSource manual = new DelegatingDataSource(this.dataSource) {

			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				connection.setAutoCommit(false);
				return connection;
			}

		};
		Session session = A2TestSupport.server(manual).build().session("chat", A2TestSupport.newSessionId());
		session.append(message("a", "id-a"));
		List<Event> mixed = session.append(message("b", "id-b"), message("a", "id-a"));
		session.append(message("c"));

		// read through the ordinary pool: nothing is left uncommitted on the connections given back
		assertThat(mixed).extracting(Event::index).containsExactly(2L, 1L);
		assertThat(this.a2.session("chat", session.id()).history(0, 10).events()).extracting(Event::index)
			.containsExactly(1L, 2L, 3L);
	}

	@Test
	void appendInsideAScopeThatHoldsAConnectionWithoutATransactionIsStored() {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		TransactionTemplate supports = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		supports.setPropagationBehavior(TransactionDefinition.PROPAGATION_SUPPORTS);
		supports.executeWithoutResult((status) -> {
			// a query in the scope binds its connection for the rest of the scope
			new JdbcTemplate(this.dataSource).queryForObject("SELECT 1", Integer.class);
			session.append(message("inside"));
		});
		assertThat(A2TestSupport.rows(this.dataSource, session.id())).isEqualTo(1);
	}

	@Test
	void readerAfterNeverSkipsAnIndexWhileWritersAppend() throws Exception {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		int total = 3000;
		List<Future<?>> writers = new ArrayList<>();
		for (int w = 0; w < 4; w++) {
			writers.add(this.executor.submit(() -> {
				for (int i = 0; i < total / 4; i++) {
					session.append(message("m"));
				}
			}));
		}
		Future<List<Long>> reader = this.executor.submit(() -> {
			List<Long> seen = new ArrayList<>();
			long after = 0;
			while (after < total) {
				for (Event event : session.history(after, 50).events()) {
					assertThat(event.index()).as("the event after %d", after).isEqualTo(after + 1);
					seen.add(event.index());
					after = event.index();
				}
			}
			return seen;
		});
		for (Future<?> writer : writers) {
			writer.get(60, TimeUnit.SECONDS);
		}
		assertThat(reader.get(60, TimeUnit.SECONDS)).hasSize(total);
	}

	@Test
	void appendJoinsTheApplicationsTransaction() {
		Session session = this.a2.session("chat", A2TestSupport.newSessionId());
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		A2Server joined = A2TestSupport.server(this.dataSource)
			.transactionManager(transactions.getTransactionManager())
			.build();
		Session same = joined.session("chat", session.id());

		assertThatThrownBy(() -> transactions.executeWithoutResult((status) -> {
			same.append(message("rolled back"));
			throw new IllegalStateException("the application fails after appending");
		})).hasMessageContaining("the application fails");
		assertThat(A2TestSupport.rows(this.dataSource, session.id())).isZero();

		transactions.executeWithoutResult((status) -> {
			same.append(message("kept", "k-1"));
			same.append(message("kept", "k-1"), message("also kept"));
		});
		assertThat(session.history(0, 10).events()).extracting(Event::index).containsExactly(1L, 2L);
	}

	private static List<Event> concat(List<Event> a, List<Event> b) {
		List<Event> all = new ArrayList<>(a);
		all.addAll(b);
		return all;
	}

}
