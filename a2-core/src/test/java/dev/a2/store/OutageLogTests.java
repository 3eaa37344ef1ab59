package dev.a2.store;

import java.sql.SQLTransientConnectionException;

import dev.a2.LogCapture;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.TransientDataAccessResourceException;

import static org.assertj.core.api.Assertions.assertThat;

/** What a repeated task logs through an outage: a line when it starts, a line when it ends. */
class OutageLogTests {

	// a logger of the drain package: the tests log it at INFO
	private final OutageLog outage = new OutageLog(LogFactory.getLog("dev.a2.drain.OutageLogTests"), "The test's task");

	private final RuntimeException unreachable = new TransientDataAccessResourceException("could not get a connection",
			new SQLTransientConnectionException("Connection is not available, request timed out after 30000ms"));

	@Test
	void repeatedFailuresToReachPostgresAreOneWarningAndTheirEndOneLine() {
		try (LogCapture log = new LogCapture()) {
			this.outage.succeeded();
			assertThat(this.outage.failed(this.unreachable)).isTrue();
			assertThat(this.outage.failed(this.unreachable)).isTrue();
			assertThat(this.outage.failed(this.unreachable)).isTrue();
			this.outage.succeeded();
			this.outage.succeeded();

			assertThat(log.lines("The test's task")).hasSize(2);
			assertThat(log.lines("The test's task cannot reach PostgreSQL (Connection is not available, request timed out "
					+ "after 30000ms); it goes on trying, and says here when it succeeds")).hasSize(1);
			assertThat(log.lines("The test's task reaches PostgreSQL again")).singleElement()
				.satisfies((line) -> assertThat(line).containsPattern("after 3 failed tries in \\d+ ms"));
		}
	}

	@Test
	void theNextOutageIsSaidAgain() {
		try (LogCapture log = new LogCapture()) {
			this.outage.failed(this.unreachable);
			this.outage.succeeded();
			this.outage.failed(this.unreachable);
			this.outage.succeeded();

			assertThat(log.lines("The test's task cannot reach PostgreSQL")).hasSize(2);
			assertThat(log.lines("The test's task reaches PostgreSQL again, after 1 failed try in ")).hasSize(2);
		}
	}

	@Test
	void otherFailuresAreLeftToTheCaller() {
		try (LogCapture log = new LogCapture()) {
			assertThat(this.outage.failed(new DataIntegrityViolationException("duplicate key"))).isFalse();
			this.outage.succeeded();

			assertThat(log.lines("The test's task")).isEmpty();
		}
	}

}
