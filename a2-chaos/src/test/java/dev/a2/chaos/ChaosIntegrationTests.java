package dev.a2.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real processes on a real PostgreSQL, under load, with real faults: random processes are
 * SIGKILLed and started again, and the database crashes once; afterwards SQL on A2's tables
 * must show nothing lost, nothing duplicated and nothing stuck. The short form runs with every
 * build; {@code -Dchaos.events}, {@code -Dchaos.kills} and {@code -Dchaos.processes} make it
 * longer, {@code -Dchaos.database-stop=fast} stops the database cleanly instead, and
 * {@code -Dchaos.soak=PT10M} runs the soak (see docs/reliability.md).
 */
class ChaosIntegrationTests {

	private static final Duration SETTLE = Duration.ofMinutes(5);

	private final Path work = Path.of(System.getProperty("chaos.work", "target/chaos"));

	private final Path jar = Path.of(System.getProperty("chaos.jar", "target/a2-chaos-app.jar"));

	private final int processes = Integer.getInteger("chaos.processes", 3);

	private final long events = Long.getLong("chaos.events", 10_000);

	private final int kills = Integer.getInteger("chaos.kills", 5);

	/** How the database goes down mid-run: {@code crash} (an immediate stop) or {@code fast} (a clean shutdown). */
	private final boolean crash = crashes(System.getProperty("chaos.database-stop", "crash"));

	/** Events pushed per second: enough to keep three processes on two cores busy through every fault. */
	private final double rate = Double.parseDouble(System.getProperty("chaos.rate", "100"));

	/** The soak's load: one the consumers keep up with, so that anything growing is a leak, not a backlog. */
	private final double soakRate = Double.parseDouble(System.getProperty("chaos.soak-rate", "50"));

	private final int writers = Integer.getInteger("chaos.writers", 8);

	private final int sessions = Integer.getInteger("chaos.sessions", 100);

	@Test
	void nothingIsLostDuplicatedOrStuckWhenProcessesAreKilledAndTheDatabaseRestarts() {
		long started = System.nanoTime();
		Path logs = freshDirectory(this.work.resolve("chaos-logs"));
		try (ChaosDatabase database = ChaosDatabase.fresh(this.work.resolve("chaos-pgdata"));
				Cluster cluster = new Cluster(database, this.processes, this.jar, logs)) {
			cluster.start();
			Ledger ledger = new Ledger();
			// the load goes on until at least `events` are acknowledged and every fault is done, so each falls under load
			Writers writers = new Writers(this.writers, Long.MAX_VALUE, this.rate, this.sessions, cluster::anyReady, ledger);
			Thread writing = new Thread(writers::run, "writers");
			writing.start();

			// the faults fall at evenly spaced points of the first `events`, the database restart in the middle
			int faults = this.kills + 1;
			int restartAt = faults / 2;
			long unavailableBeforeRestart = 0;
			long unavailableAfterRestart = 0;
			Duration listeningAgain = Duration.ZERO;
			boolean listening = true;
			boolean sweeping = true;
			Takeovers takeovers = new Takeovers();
			for (int fault = 0; fault < faults; fault++) {
				long threshold = this.events * (fault + 1) / (faults + 1);
				awaitUntil(Duration.ofMinutes(30), () -> ledger.acknowledgedEvents() >= threshold);
				if (fault == restartAt) {
					unavailableBeforeRestart = ledger.unavailableAnswers();
					cluster.restartDatabase(this.crash, Duration.ofSeconds(3),
							() -> System.out.println("chaos: " + (this.crash ? "crashed" : "stopped") + " the database at "
									+ ledger.acknowledgedEvents() + " acknowledged events"));
					long back = System.nanoTime();
					// every process listens again (LISTEN/NOTIFY), without being restarted
					listening = awaitUntil(Duration.ofSeconds(60), () -> listeners(database.jdbc()) >= this.processes);
					listeningAgain = Duration.ofNanos(System.nanoTime() - back);
					// and every process's sweep succeeds again, by itself
					Instant backAt = Instant.now();
					sweeping = awaitUntil(Duration.ofSeconds(60), () -> cluster.processes().stream().allMatch((p) -> {
						Instant last = p.lastSweep();
						return last != null && last.isAfter(backAt);
					}));
					unavailableAfterRestart = ledger.unavailableAnswers();
				}
				else {
					long at = ledger.acknowledgedEvents();
					AppProcess[] victim = new AppProcess[1];
					String takeover = takeovers.killAndMeasure(database.jdbc(), () -> victim[0] = cluster.killOne(),
							"kill " + (fault + 1));
					System.out.println("chaos: killed process " + victim[0].slot() + " at " + at + " acknowledged events ("
							+ pending(database) + " units of consumer work pending); " + takeover);
				}
			}
			cluster.awaitRestarts();
			awaitUntil(Duration.ofMinutes(30), () -> ledger.acknowledgedEvents() >= this.events);
			writers.stop();
			join(writing);
			long pushedAt = System.nanoTime();

			// let the consumers finish: polled, with a deadline; the verdict below says what is left
			System.out.println("chaos: pushing done at " + ledger.acknowledgedEvents() + " acknowledged events ("
					+ pending(database) + " units of consumer work pending)");
			awaitUntil(SETTLE, () -> Verdict.pendingWork(database.jdbc()) == 0);
			long settledAt = System.nanoTime();
			List<Integer> healthy = healthyProcesses(cluster);
			List<AppProcess> crashed = cluster.crashed();
			Verdict verdict = Verdict.check(database.jdbc(), ledger);

			print(cluster.processes().size(), cluster.kills(), database.restarts(), verdict);
			System.out.printf("pushes %,d (%,d retries: %,d answered 503 STORE_UNAVAILABLE, %,d unanswered), "
					+ "503s while the database restarted %,d, listening again %d ms after it was back%n",
					ledger.pushes(), ledger.retries(), ledger.unavailableAnswers(), ledger.unreachableTries(),
					unavailableAfterRestart - unavailableBeforeRestart, listeningAgain.toMillis());
			System.out.printf("dead letters %,d (all poison: %s), out of order %,d; pushing %d s, settling %d s, in all %d s%n",
					verdict.deadLetters, verdict.wrongDeadLetters == 0, verdict.outOfOrder,
					(pushedAt - started) / 1_000_000_000, (settledAt - pushedAt) / 1_000_000_000,
					(System.nanoTime() - started) / 1_000_000_000);
			System.out.println("effects written by a later attempt (a takeover after a kill or the restart, or a retry): "
					+ laterAttempts(database.jdbc()));
			System.out.println(takeovers.summary());
			verdict.findings.forEach((f) -> System.out.println("finding: " + f));
			List<String> loopFailures = ProcessLogs.loopFailures(logs);
			loopFailures.forEach((f) -> System.out.println("claim loop failed: " + f));
			System.out.println("statements failed by PostgreSQL to break a deadlock, in the processes' logs: "
					+ ProcessLogs.deadlocks(logs));

			assertThat(ledger.unexpectedAnswers()).as("answers other than 2xx or 503 STORE_UNAVAILABLE").isEmpty();
			assertThat(loopFailures).as("claim loops that failed other than for the database being out of reach").isEmpty();
			assertThat(cluster.kills()).as("kills").isEqualTo(this.kills);
			assertThat(ledger.acknowledgedEvents()).as("acknowledged events").isGreaterThanOrEqualTo(this.events);
			assertThat(cluster.failedStarts()).as("processes that did not start again after a kill").isEmpty();
			assertThat(crashed).as("processes that died without being killed").isEmpty();
			assertThat(healthy).as("processes whose health is UP at the end").hasSize(this.processes);
			assertThat(listening).as("every process listens again after the database restart").isTrue();
			assertThat(sweeping).as("every process sweeps again after the database restart").isTrue();
			assertThat(unavailableAfterRestart - unavailableBeforeRestart).as("503 STORE_UNAVAILABLE while the database was down")
				.isPositive();
			assertThat(verdict.lost).as("lost").isZero();
			assertThat(verdict.duplicated).as("duplicated").isZero();
			assertThat(verdict.stuck).as("stuck").isZero();
			assertThat(verdict.outOfOrder).as("effects out of their lane's order").isZero();
			assertThat(verdict.wrongDeadLetters).as("dead letters where the consumer did not fail, or missing").isZero();
			assertThat(verdict.events).as("stored orders: every push was acknowledged in the end").isEqualTo(ledger.acknowledgedEvents());
			assertThat(verdict.effects).isEqualTo(verdict.events * Verdict.CONSUMERS.size() - verdict.deadLetters);
		}
	}

	@Test
	@EnabledIfSystemProperty(named = "chaos.soak", matches = ".+")
	void soakHoldsMemoryAndConnectionsFlat() {
		Duration duration = Duration.parse(System.getProperty("chaos.soak"));
		Duration every = Duration.ofSeconds(Math.max(5, duration.toSeconds() / 40));
		Path logs = freshDirectory(this.work.resolve("soak-logs"));
		try (ChaosDatabase database = ChaosDatabase.fresh(this.work.resolve("soak-pgdata"));
				Cluster cluster = new Cluster(database, this.processes, this.jar, logs)) {
			cluster.start();
			Ledger ledger = new Ledger();
			Writers writers = new Writers(this.writers, Long.MAX_VALUE, this.soakRate, this.sessions, cluster::anyReady, ledger);
			Thread writing = new Thread(writers::run, "writers");
			writing.start();
			Soak soak = new Soak(cluster, database.jdbc(), ledger);
			long end = System.nanoTime() + duration.toNanos();
			while (System.nanoTime() < end) {
				AppProcess.pause(every);
				soak.sample();
			}
			writers.stop();
			join(writing);
			awaitUntil(SETTLE, () -> Verdict.pendingWork(database.jdbc()) == 0);
			Verdict verdict = Verdict.check(database.jdbc(), ledger);
			print(cluster.processes().size(), 0, 0, verdict);
			verdict.findings.forEach((f) -> System.out.println("finding: " + f));

			soak.assertNoGrowth();
			assertThat(ledger.unexpectedAnswers()).isEmpty();
			assertThat(ProcessLogs.loopFailures(logs)).as("claim loops that failed").isEmpty();
			assertThat(verdict.clean()).as("lost, duplicated, stuck, out of order or wrong dead letters").isTrue();
		}
	}

	private static void print(int processes, int kills, int restarts, Verdict verdict) {
		System.out.println();
		System.out.println("| processes | kills | database restarts | events | effects | lost | duplicated | stuck |");
		System.out.println("|---|---|---|---|---|---|---|---|");
		System.out.printf("| %d | %d | %d | %,d | %,d | %d | %d | %d |%n", processes, kills, restarts, verdict.events,
				verdict.effects, verdict.lost, verdict.duplicated, verdict.stuck);
		System.out.println();
	}

	private static String pending(ChaosDatabase database) {
		try {
			return String.format("%,d", Verdict.pendingWork(database.jdbc()));
		}
		catch (RuntimeException ex) {
			return "unknown";
		}
	}

	/** Per consumer, the effects its second or later attempt wrote: the runs the faults really interrupted. */
	private static String laterAttempts(JdbcTemplate jdbc) {
		return jdbc.query("SELECT cause_consumer, count(*) FROM a2_event WHERE cause_attempt > 1 GROUP BY 1 ORDER BY 1",
				(rs, n) -> rs.getString(1) + " " + rs.getLong(2)).toString();
	}

	/** Connections listening for other instances' changes: one per process when all are connected. */
	private static long listeners(JdbcTemplate jdbc) {
		try {
			return jdbc.queryForObject("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'a2-listen'",
					Long.class);
		}
		catch (RuntimeException ex) {
			return 0;
		}
	}

	private static List<Integer> healthyProcesses(Cluster cluster) {
		List<Integer> healthy = new ArrayList<>();
		for (AppProcess process : cluster.processes()) {
			try {
				process.awaitReady(Duration.ofSeconds(30));
				healthy.add(process.slot());
			}
			catch (IllegalStateException ex) {
				System.out.println("process " + process.slot() + " is not healthy: " + ex.getMessage());
			}
		}
		return healthy;
	}

	/** Polls {@code condition} until it holds or {@code timeout} passes; answers whether it held. */
	static boolean awaitUntil(Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			try {
				if (condition.getAsBoolean()) {
					return true;
				}
			}
			catch (RuntimeException ex) {
				// the database may be restarting; ask again
			}
			AppProcess.pause(Duration.ofMillis(500));
		}
		return false;
	}

	private static boolean crashes(String databaseStop) {
		return switch (databaseStop) {
			case "crash" -> true;
			case "fast" -> false;
			default -> throw new IllegalArgumentException(
					"chaos.database-stop is 'crash' or 'fast', not '" + databaseStop + "'");
		};
	}

	/** Logs of an earlier run would be read as this one's. */
	private static Path freshDirectory(Path directory) {
		try {
			ChaosDatabase.deleteRecursively(directory);
			return Files.createDirectories(directory);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static void join(Thread thread) {
		try {
			thread.join();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
