package dev.a2.testkit;

import java.time.Duration;

import dev.a2.A2Exception;
import dev.a2.Consumer;
import dev.a2.Contract;
import dev.a2.ErrorCode;
import dev.a2.Event;
import dev.a2.Lane;
import dev.a2.NewEvent;
import dev.a2.Reducer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A consumer's code run in a plain unit test: no database, no drainer. */
class ConsumerRunTests {

	record Note(String text) {
	}

	record Count(int notes) {
	}

	static final Contract NOTES = Contract.builder("notes")
		.event("note.added", Note.class)
		.event("note.echoed", Note.class)
		.event("note.reminded", Note.class)
		.reducer("count", Reducer.of(Count.class, new Count(0),
				(count, event) -> event.type().equals("note.added") ? new Count(count.notes() + 1) : count))
		.build();

	static final Consumer ECHO = Consumer.builder("notes", "echo")
		.types("note.added")
		.lane(Lane.fixed("echo"))
		.run((context) -> {
			context.signal().throwIfAborted();
			Note note = context.event().payload(Note.class);
			Count count = (Count) context.session().state("count").state();
			context.session().append("echo", NewEvent.of("note.echoed", new Note(note.text() + " #" + count.notes())));
			context.session().schedule("remind", Duration.ofMinutes(5), NewEvent.of("note.reminded", new Note(note.text())));
			return NewEvent.of("note.echoed", new Note("done"));
		});

	@Test
	void aRunSeesItsTriggerAndStateAndWhatItWritesIsRecordedWithItsCause() throws Exception {
		ConsumerRun run = ConsumerRun.of(NOTES, ECHO).inSession("n-1").given(NewEvent.of("note.added", new Note("first")));

		Object returned = run.run(NewEvent.of("note.added", new Note("second")));

		assertThat(returned).isEqualTo(NewEvent.of("note.echoed", new Note("done")));
		assertThat(run.returned()).containsExactly(NewEvent.of("note.echoed", new Note("done")));
		assertThat(run.appended()).singleElement().satisfies((Event echoed) -> {
			assertThat(echoed.payload()).isEqualTo(new Note("second #2"));
			assertThat(echoed.index()).isEqualTo(3);
			assertThat(echoed.cause().consumer()).isEqualTo("echo");
			assertThat(echoed.cause().lane()).isEqualTo("echo");
			assertThat(echoed.cause().index()).isEqualTo(2);
			assertThat(echoed.cause().attempt()).isEqualTo(1);
		});
		assertThat(run.scheduled()).singleElement()
			.satisfies((task) -> assertThat(task.dueAt()).isEqualTo(run.clock().instant().plus(Duration.ofMinutes(5))));
	}

	@Test
	void aReRunWritesNothingTwice() throws Exception {
		ConsumerRun run = ConsumerRun.of(NOTES, ECHO);
		run.run(NewEvent.of("note.added", new Note("again")));

		run.rerun();

		assertThat(run.appended()).isEmpty();
		assertThat(run.session().history(0, 100).events()).extracting(Event::type)
			.containsExactly("note.added", "note.echoed");
		assertThat(run.scheduled()).hasSize(1);
	}

	@Test
	void anAbortedSignalStopsTheCodeBeforeItWrites() {
		ConsumerRun run = ConsumerRun.of(NOTES, ECHO);
		run.signal().abort(new A2Exception(ErrorCode.ABORTED, "stop.requested arrived"));

		assertThatThrownBy(() -> run.run(NewEvent.of("note.added", new Note("x")))).isInstanceOf(A2Exception.class)
			.hasMessageContaining("stop.requested arrived");
		assertThat(run.session().history(0, 100).events()).extracting(Event::type).containsExactly("note.added");
	}

	@Test
	void aConsumerOfAnotherContractIsRefused() {
		Consumer other = Consumer.builder("notes", "other").types("no.such.type").run((context) -> null);
		assertThatThrownBy(() -> ConsumerRun.of(NOTES, other)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("no.such.type");
	}

}
