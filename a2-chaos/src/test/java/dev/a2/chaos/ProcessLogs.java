package dev.a2.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What the processes' logs show that an audit of the tables cannot: a claim loop that failed. The
 * sweep picks its session up again, so nothing is lost, but a loop fails only for a defect or for
 * the database being out of reach.
 */
final class ProcessLogs {

	private static final String LOOP_FAILED = "failed; the sweep will try again";

	private static final String UNREACHABLE = "dev.a2.A2Exception: PostgreSQL cannot be reached";

	private static final String DEADLOCK = "Caused by: org.postgresql.util.PSQLException: ERROR: deadlock detected";

	private ProcessLogs() {
	}

	/**
	 * How many statements PostgreSQL failed to break a deadlock, as the processes logged them. A2's
	 * writers take their rows in one order, and the few that cannot are tried again, so this is
	 * printed rather than asserted: a count that grows tells of a lock order broken.
	 */
	static long deadlocks(Path logs) {
		long deadlocks = 0;
		for (List<String> lines : read(logs).values()) {
			deadlocks += lines.stream().filter((line) -> line.startsWith(DEADLOCK)).count();
		}
		return deadlocks;
	}

	/** The claim loops that failed for anything but the database being out of reach, with their exception. */
	static List<String> loopFailures(Path logs) {
		List<String> failures = new ArrayList<>();
		read(logs).forEach((file, lines) -> {
			for (int i = 0; i < lines.size(); i++) {
				if (!lines.get(i).contains("Draining session") || !lines.get(i).endsWith(LOOP_FAILED)) {
					continue;
				}
				String exception = lines.stream().skip(i + 1).filter((l) -> !l.isBlank()).findFirst().orElse("");
				if (!exception.startsWith(UNREACHABLE)) {
					failures.add(file + ":" + (i + 1) + ": " + exception);
				}
			}
		});
		return failures;
	}

	/** Each process log's lines, by file, in the order of their names. */
	private static Map<Path, List<String>> read(Path logs) {
		Map<Path, List<String>> read = new TreeMap<>();
		try (Stream<Path> files = Files.list(logs)) {
			for (Path file : files.filter((f) -> f.toString().endsWith(".log")).toList()) {
				read.put(file.getFileName(), Files.readAllLines(file, StandardCharsets.ISO_8859_1));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return read;
	}

}
