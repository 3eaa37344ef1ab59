package dev.a2;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.a2.TestContracts.MessageSent;
import dev.a2.TestContracts.Note;
import dev.a2.store.DeadLetter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.a2.TestContracts.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Fixed-lane consumers that take a cursor's events in batches: in order, each event once, what a
 * batch returns committed with the cursor's move, and a failure pinned to the event that fails.
 */
class BatchConsumerIntegrationTests {

	private final DrainTestSupport support = new DrainTestSupport("batch_consumers");

	@AfterEach
	void halt() {
		this.support.close();
	}

	@Test
	void aProjectionTakesTheLogInOrderInBatchesAndCommitsWhatEachBatchReturns() {
		List<List<Long>> batches = new CopyOnWriteArrayList<>();
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.runBatch((batch) -> {
				batches.add(batch.stream().map((context) -> context.event().index()).toList());
				return NewEvent.of("note", new Note("projected " + batch.size()));
			});
		A2Server server = this.support.server(DrainSettings.DEFAULTS.withLease(DrainTestSupport.LEASE).withCursorBatch(40),
				projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		List<NewEvent> events = new ArrayList<>();
		for (int i = 1; i <= 100; i++) {
			events.add(message("m" + i));
		}
		// one append: the cursor then reads 40 events a claim
		session.append(events);
		assertThat(session.consume("projection")).isGreaterThanOrEqualTo(100);

		List<Long> seen = batches.stream().flatMap(List::stream).toList();
		assertThat(seen).containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, 100).boxed().toList());
		assertThat(batches).hasSizeLessThan(100).allSatisfy((batch) -> assertThat(batch).hasSizeLessThanOrEqualTo(40));
		assertThat(batches.get(0)).hasSize(40);
		// one returned note per batch, each written once
		assertThat(this.support.ids(session.id(), "note")).hasSize(batches.size()).doesNotHaveDuplicates();
	}

	@Test
	void aFailureInABatchDeadLettersTheEventThatFailsAndKeepsTheOnesBeforeIt() {
		List<String> projected = new CopyOnWriteArrayList<>();
		List<Integer> sizes = new CopyOnWriteArrayList<>();
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.runBatch((batch) -> {
				sizes.add(batch.size());
				List<String> texts = batch.stream().map((context) -> context.event().payload(MessageSent.class).text()).toList();
				if (texts.contains("poison")) {
					throw new NonRetriableException("cannot project poison");
				}
				projected.addAll(texts);
				return null;
			});
		A2Server server = this.support.server(projection);
		Session session = server.session("chat", A2TestSupport.newSessionId());
		session.append(message("a"), message("b"), message("poison"), message("d"), message("e"));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(server.deadLetters("chat", session.id(), "projection", 10)).singleElement()
				.extracting(DeadLetter::index)
				.isEqualTo(3L));
		// the batch of five failed; run one at a time, a and b completed, poison stopped the lane
		assertThat(sizes).startsWith(5, 1, 1, 1);
		assertThat(projected).containsExactly("a", "b");
		assertThatThrownBy(() -> server.session("chat", session.id()).consume("projection"))
			.isInstanceOfSatisfying(A2Exception.class, (ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.CONSUMER_DEAD_LETTERED));

		server.redrive("chat", session.id(), "projection", 3, RedriveAction.SKIP);
		assertThat(server.session("chat", session.id()).consume("projection")).isEqualTo(5);
		assertThat(projected).containsExactly("a", "b", "d", "e");
	}

	@Test
	void aStaleBatchCanNeitherMoveTheCursorNorCommitWhatItReturns() throws Exception {
		CountDownLatch zombieStarted = new CountDownLatch(1);
		CountDownLatch releaseZombie = new CountDownLatch(1);
		AtomicReference<A2Exception> zombieReason = new AtomicReference<>();
		Consumer projection = Consumer.builder("chat", "projection")
			.types("message.sent")
			.lane(Lane.fixed("projection"))
			.runBatch((batch) -> {
				ConsumerContext first = batch.get(0);
				if (first.attempt() == 1) {
					zombieStarted.countDown();
					releaseZombie.await(60, TimeUnit.SECONDS);
					first.signal().onAbort(() -> zombieReason.set(first.signal().reason()));
					return NewEvent.of("note", new Note("from the zombie"));
				}
				return NewEvent.of("note", new Note("from the takeover of " + batch.size()));
			});
		A2Server stalled = this.support.manualServer(projection);
		A2Server other = this.support.manualServer(projection);
		Session session = stalled.session("chat", A2TestSupport.newSessionId());
		session.append(message("a"), message("b"), message("c"));
		assertThat(zombieStarted.await(20, TimeUnit.SECONDS)).isTrue();

		this.support.clock.advance(DrainTestSupport.LEASE.plusSeconds(1));
		other.sweep();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(noteTexts(session)).containsExactly(
				"from the takeover of 3"));

		releaseZombie.countDown();
		await().atMost(Duration.ofSeconds(20)).until(() -> zombieReason.get() != null);
		assertThat(zombieReason.get().code()).isEqualTo(ErrorCode.SUPERSEDED_ATTEMPT);
		assertThat(noteTexts(session)).containsExactly("from the takeover of 3");
		assertThat(this.support.count("SELECT count(*) FROM a2_cursor WHERE position < target")).isZero();
	}

	private List<String> noteTexts(Session session) {
		return session.history(0, 100).events().stream().filter((event) -> event.type().equals("note"))
			.map((event) -> event.payload(Note.class).text()).toList();
	}

	@Test
	void onlyAFixedLaneTakesBatches() {
		assertThatThrownBy(() -> Consumer.builder("chat", "batchy").lane(Lane.independent()).runBatch((batch) -> null))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("lane must be a fixed string");
	}

}
