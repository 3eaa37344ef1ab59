package dev.a2.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CPU time of this JVM and of the benchmark's PostgreSQL (its postmaster, found by its port, and
 * the postmaster's children), from {@code /proc}: where a row is bound by the CPU, what each side
 * spends per event says more than its rate. Zero where {@code /proc} cannot tell (not Linux, or a
 * database on another machine).
 */
final class ProcessCpu {

	/** Linux's clock tick of /proc/PID/stat (USER_HZ), 100 on every platform Linux runs on today. */
	private static final double TICK_MILLIS = 10;

	private final int postgresPort;

	private ProcessCpu(int postgresPort) {
		this.postgresPort = postgresPort;
	}

	/** For the PostgreSQL a JDBC URL names (port 5432 where it names none). */
	static ProcessCpu of(String jdbcUrl) {
		Matcher port = Pattern.compile("//[^:/]+:(\\d+)/").matcher(jdbcUrl);
		return new ProcessCpu(port.find() ? Integer.parseInt(port.group(1)) : 5432);
	}

	/** The CPU both have used so far. */
	Sample now() {
		return new Sample(ticks("self") * TICK_MILLIS, postgresTicks() * TICK_MILLIS);
	}

	/** Milliseconds of CPU, user and system: this JVM's (every thread) and PostgreSQL's. */
	record Sample(double jvmMillis, double postgresMillis) {

		/** What was used since {@code before}, divided by {@code count} (pushes, events). */
		Sample since(Sample before, double count) {
			return new Sample((this.jvmMillis - before.jvmMillis) / count, (this.postgresMillis - before.postgresMillis) / count);
		}

	}

	/** User and system time of a process so far, in clock ticks; 0 where /proc cannot tell. */
	private static long ticks(String pid) {
		try {
			String stat = Files.readString(Path.of("/proc", pid, "stat"));
			// the fields after the command's name, which is in parentheses and may hold spaces
			String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
			return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
		}
		catch (IOException | RuntimeException ex) {
			return 0;
		}
	}

	private long postgresTicks() {
		Map<String, String> parents = new HashMap<>();
		String postmaster = null;
		try (var processes = Files.list(Path.of("/proc"))) {
			for (Path process : (Iterable<Path>) processes::iterator) {
				String pid = process.getFileName().toString();
				if (!pid.chars().allMatch(Character::isDigit)) {
					continue;
				}
				try {
					String stat = Files.readString(process.resolve("stat"));
					parents.put(pid, stat.substring(stat.lastIndexOf(')') + 2).split(" ")[1]);
					String command = Files.readString(process.resolve("cmdline")).replace('\0', ' ');
					if (command.contains("postgres") && command.contains("-p " + this.postgresPort + " ")) {
						postmaster = pid;
					}
				}
				catch (IOException | RuntimeException ex) {
					// gone meanwhile
				}
			}
		}
		catch (IOException ex) {
			return 0;
		}
		if (postmaster == null) {
			return 0;
		}
		long ticks = ticks(postmaster);
		for (Map.Entry<String, String> process : parents.entrySet()) {
			if (process.getValue().equals(postmaster)) {
				ticks += ticks(process.getKey());
			}
		}
		return ticks;
	}

}
