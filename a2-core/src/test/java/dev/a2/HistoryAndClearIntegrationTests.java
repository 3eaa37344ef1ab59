package dev.a2;

import java.util.List;

import javax.sql.DataSource;

import dev.a2.test.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static dev.a2.TestContracts.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(PostgresExtension.class)
class HistoryAndClearIntegrationTests {

	private final DataSource dataSource;

	private final Session session;

	HistoryAndClearIntegrationTests(DataSource dataSource) {
		this.dataSource = dataSource;
		this.session = A2TestSupport.server(dataSource).build().session("chat", A2TestSupport.newSessionId());
	}

	@Test
	void historyOfASessionNeverWrittenIsEmpty() {
		HistoryPage page = this.session.history(0, 10);
		assertThat(page.events()).isEmpty();
		assertThat(page.head()).isZero();
	}

	@Test
	void historyPagesThroughTheLogInOrder() {
		for (int i = 1; i <= 25; i++) {
			this.session.append(message("m" + i));
		}
		HistoryPage first = this.session.history(0, 10);
		HistoryPage second = this.session.history(10, 10);
		HistoryPage last = this.session.history(20, 10);
		HistoryPage beyond = this.session.history(25, 10);

		assertThat(first.events()).extracting(Event::index).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
		assertThat(second.events()).first().extracting(Event::index).isEqualTo(11L);
		assertThat(last.events()).extracting(Event::index).containsExactly(21L, 22L, 23L, 24L, 25L);
		assertThat(last.events().get(0).payload(TestContracts.MessageSent.class).text()).isEqualTo("m21");
		assertThat(beyond.events()).isEmpty();
		assertThat(List.of(first, second, last, beyond)).allSatisfy((page) -> assertThat(page.head()).isEqualTo(25));
	}

	@Test
	void clearHidesEverythingBeforeItAndCountsInClearIndex() {
		this.session.append(message("a"), message("b"));
		long marker = this.session.clear();
		List<Event> after = this.session.append(message("c"));

		assertThat(marker).isEqualTo(3);
		assertThat(after.get(0).index()).isEqualTo(4);
		assertThat(after.get(0).clearIndex()).isEqualTo(1);
		HistoryPage page = this.session.history(0, 100);
		assertThat(page.events()).extracting(Event::index).containsExactly(4L);
		assertThat(page.head()).isEqualTo(4);
		assertThat(this.session.history(1, 100).events()).extracting(Event::index).containsExactly(4L);

		this.session.clear();
		assertThat(this.session.history(0, 100).events()).isEmpty();
		assertThat(this.session.append(message("d")).get(0).clearIndex()).isEqualTo(2);
	}

	@Test
	void clearWithTheCurrentLastIndexClears() {
		this.session.append(message("a"), message("b"));
		assertThat(this.session.clear(2)).isEqualTo(3);
		assertThat(this.session.history(0, 10).events()).isEmpty();
	}

	@Test
	void clearWithAStaleLastIndexChangesNothing() {
		this.session.append(message("a"), message("b"));
		assertThatThrownBy(() -> this.session.clear(1)).isInstanceOf(A2Exception.class)
			.hasMessageContaining("its last index is 2, not 1")
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.CONFLICT);

		assertThat(this.session.history(0, 10).events()).extracting(Event::index).containsExactly(1L, 2L);
		assertThat(A2TestSupport.rows(this.dataSource, this.session.id())).isEqualTo(2);
		assertThat(this.session.append(message("c")).get(0).clearIndex()).isZero();
	}

	@Test
	void clearOfASessionNeverWritten() {
		assertThatThrownBy(() -> this.session.clear(5)).isInstanceOf(A2Exception.class)
			.extracting((ex) -> ((A2Exception) ex).code())
			.isEqualTo(ErrorCode.CONFLICT);
		assertThat(A2TestSupport.rows(this.dataSource, this.session.id())).isZero();
		assertThat(this.session.clear(0)).isEqualTo(1);
	}

	@Test
	void retriedAppendOfAnEventFromBeforeAClearAnswersTheOldEvent() {
		Event original = this.session.append(message("a", "keep-me")).get(0);
		this.session.clear();
		assertThat(this.session.append(message("a", "keep-me"))).containsExactly(original);
		assertThat(this.session.history(0, 10).events()).isEmpty();
	}

}
