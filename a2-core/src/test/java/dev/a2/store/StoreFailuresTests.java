package dev.a2.store;

import java.io.EOFException;
import java.net.ConnectException;

import dev.a2.A2Exception;
import dev.a2.ErrorCode;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What a caller is told when PostgreSQL cannot be reached, as the driver and the pool report it. */
class StoreFailuresTests {

	/** A connection cut mid-read, as pgjdbc reports it when PostgreSQL stops under a commit. */
	private final RuntimeException brokenCommit = new DataAccessResourceFailureException("JDBC commit",
			new PSQLException("An I/O error occurred while sending to the backend.", PSQLState.CONNECTION_FAILURE,
					new EOFException()));

	private final RuntimeException refused = new CannotGetJdbcConnectionException("Failed to obtain JDBC Connection",
			new PSQLException("Connection to localhost:5432 refused.", PSQLState.CONNECTION_UNABLE_TO_CONNECT,
					new ConnectException("Connection refused")));

	@Test
	void theDriversWordsAreSaidRatherThanTheMessageOfACauseThatHasNone() {
		// it was "PostgreSQL cannot be reached (null)"
		assertThat(StoreFailures.rootMessage(this.brokenCommit)).isEqualTo("An I/O error occurred while sending to the backend.");
		assertThat(StoreFailures.rootMessage(this.refused)).isEqualTo("Connection refused");
		assertThat(StoreFailures.rootMessage(new IllegalStateException(new EOFException()))).isEqualTo("java.io.EOFException");
		assertThat(StoreFailures.rootMessage(new EOFException())).isEqualTo("EOFException");
	}

	/** It said "nothing was changed" when the commit may have reached PostgreSQL and only its answer was lost. */
	@Test
	void aConnectionThatBrokeUnderTheRequestSaysAWriteMayBeStoredAndOneNeverMadeThatNothingWas() {
		assertThatThrownBy(() -> StoreFailures.guard(() -> {
			throw this.brokenCommit;
		})).isInstanceOfSatisfying(A2Exception.class, (ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.STORE_UNAVAILABLE))
			.hasMessage("PostgreSQL cannot be reached (An I/O error occurred while sending to the backend.): the connection "
					+ "broke before PostgreSQL answered, so a write may or may not be stored; try again later with the same "
					+ "ids, which stores nothing twice");
		assertThatThrownBy(() -> StoreFailures.guard(() -> {
			throw this.refused;
		})).isInstanceOfSatisfying(A2Exception.class, (ex) -> assertThat(ex.code()).isEqualTo(ErrorCode.STORE_UNAVAILABLE))
			.hasMessage("PostgreSQL cannot be reached (Connection refused); nothing was changed, try again later");
	}

}
