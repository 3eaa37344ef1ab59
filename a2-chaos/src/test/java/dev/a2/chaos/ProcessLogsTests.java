package dev.a2.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

class ProcessLogsTests {

	@Test
	void aLoopThatFailedForADefectIsFoundAndOneThatLostTheDatabaseIsNot(@TempDir Path logs) throws IOException {
		Files.writeString(logs.resolve("app-0-1.log"), """
				2026-12-04T08:22:53.549Z  WARN 1710 --- [a2-chaos] [     a2-drain-1] dev.a2.drain.Drainer                     : Draining session 's-94' of contract 'orders' failed; the sweep will try again

				java.lang.IllegalArgumentException
				\tat java.base/java.util.concurrent.Semaphore.release(Semaphore.java:618) ~[na:na]
				2026-12-04T08:22:56.002Z  WARN 1710 --- [a2-chaos] [     a2-drain-2] dev.a2.drain.Drainer                     : Draining session 's-15' of contract 'orders' failed; the sweep will try again

				dev.a2.A2Exception: PostgreSQL cannot be reached (An I/O error occurred while sending to the backend.); nothing was changed, try again later
				""");
		Files.writeString(logs.resolve("app-1-1.log"), """
				2026-12-04T08:22:50.042Z  WARN 1711 --- [a2-chaos] [      a2-run-54] dev.a2.drain.Drainer                     : Consumer 'picky' dead-lettered event 238 of session 's-27' after 1 failure(s)
				""");

		assertThat(ProcessLogs.loopFailures(logs)).containsExactly("app-0-1.log:1: java.lang.IllegalArgumentException");
	}

	@Test
	void deadlocksAreCountedOncePerFailedStatement(@TempDir Path logs) throws IOException {
		Files.writeString(logs.resolve("app-0-1.log"), """
				2026-12-04T14:41:45.175Z  WARN 21937 --- [a2-chaos] [   a2-heartbeat] dev.a2.drain.Drainer                     : Could not renew the leases of running consumer attempts

				org.springframework.dao.PessimisticLockingFailureException: PreparedStatementCallback; SQL [...]; ERROR: deadlock detected
				Caused by: org.postgresql.util.PSQLException: ERROR: deadlock detected
				  Detail: Process 21968 waits for ShareLock on transaction 300290; blocked by process 21969.
				""");
		Files.writeString(logs.resolve("app-1-1.log"), """
				Caused by: org.postgresql.util.PSQLException: ERROR: deadlock detected
				""");

		assertThat(ProcessLogs.deadlocks(logs)).isEqualTo(2);
	}

}
