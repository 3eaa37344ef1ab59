package dev.a2.chaos;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * How long a killed process's work waits before another process starts it: the claims the dead
 * process held (rows whose owner's liveness lock ended with it), from the kill until they were made
 * claimable (a sweep saw the owner gone), until another process claimed the first of them, and until
 * it claimed them all (a token changed, or the unit is done already). Under a backlog the last
 * figure includes the wait in line behind other due work. Read with SQL at 50 ms intervals, from the
 * claims held just before the kill; each figure is the time of the first look that saw it, so an
 * upper bound (a look comes some 100-300 ms after the kill, the kill and the wait for its locks to end
 * included).
 */
final class Takeovers {

	private static final Duration POLL = Duration.ofMillis(50);

	private static final Duration GIVE_UP = Duration.ofSeconds(120);

	/** The owner ids whose liveness lock is held now (the advisory locks of the schema's key space). */
	private static final String LIVE_OWNERS = """
			SELECT objid::bigint FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND objsubid = 2
			  AND classid = (hashtext(current_schema()) & 2147483647)::oid
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())""";

	/** Every claim held now, with its owner. */
	private static final String CLAIMS = """
			SELECT owner::bigint, claim::text FROM a2_work WHERE claim IS NOT NULL AND owner IS NOT NULL
			UNION ALL
			SELECT owner::bigint, claim::text FROM a2_cursor WHERE claim IS NOT NULL AND owner IS NOT NULL""";

	/** Of those tokens, the ones still held (nobody took the claim over yet), and whether each was made claimable. */
	private static final String STILL_HELD = """
			SELECT claim::text, lease_until = '-infinity' AS lapsed FROM a2_work WHERE claim = ANY(?::uuid[])
			UNION ALL
			SELECT claim::text, lease_until = '-infinity' FROM a2_cursor WHERE claim = ANY(?::uuid[])""";

	private final List<Duration> claimable = new CopyOnWriteArrayList<>();

	private final List<Duration> firstStarted = new CopyOnWriteArrayList<>();

	private final List<Duration> allStarted = new CopyOnWriteArrayList<>();

	private final List<Thread> measuring = new CopyOnWriteArrayList<>();

	private final AtomicInteger idle = new AtomicInteger();

	private final AtomicInteger unfinished = new AtomicInteger();

	/**
	 * Kills through {@code kill}, finds what the killed process held, and measures its takeover on a
	 * thread of its own (the run goes on meanwhile), printing a line when it is done.
	 * @return a line saying what the killed process held
	 */
	String killAndMeasure(JdbcTemplate jdbc, Runnable kill, String name) {
		Set<Long> before = new HashSet<>(jdbc.queryForList(LIVE_OWNERS, Long.class));
		// what every process holds just before the kill: the killed one's may be taken over before a look after it
		List<Map<String, Object>> claims = jdbc.queryForList(CLAIMS);
		long killedAt = System.nanoTime();
		kill.run();
		// the dead process's backends end as soon as PostgreSQL reads the closed sockets
		Set<Long> gone = new HashSet<>();
		while (gone.isEmpty() && System.nanoTime() - killedAt < Duration.ofSeconds(10).toNanos()) {
			gone.addAll(before);
			gone.removeAll(jdbc.queryForList(LIVE_OWNERS, Long.class));
			pause();
		}
		if (gone.isEmpty()) {
			return "no liveness lock ended within 10 s";
		}
		Set<String> held = new HashSet<>();
		claims.stream().filter((row) -> gone.contains(((Number) row.get("owner")).longValue()))
			.forEach((row) -> held.add((String) row.get("claim")));
		if (held.isEmpty()) {
			this.idle.incrementAndGet();
			return "it held no claims";
		}
		Thread thread = new Thread(() -> measure(jdbc, name, held, killedAt), "takeover-" + name);
		this.measuring.add(thread);
		thread.start();
		return "it held " + held.size() + " claim(s)";
	}

	private void measure(JdbcTemplate jdbc, String name, Set<String> held, long killedAt) {
		String tokens = "{" + String.join(",", held) + "}";
		Duration allClaimable = null;
		Duration first = null;
		int left = held.size();
		try {
			while (left > 0 && System.nanoTime() - killedAt < GIVE_UP.toNanos()) {
				List<Map<String, Object>> still = jdbc.queryForList(STILL_HELD, tokens, tokens);
				Duration now = Duration.ofNanos(System.nanoTime() - killedAt);
				left = still.size();
				if (first == null && left < held.size()) {
					first = now;
				}
				if (allClaimable == null && still.stream().allMatch((row) -> Boolean.TRUE.equals(row.get("lapsed")))) {
					allClaimable = now;
				}
				if (left > 0) {
					pause();
				}
			}
		}
		catch (RuntimeException ex) {
			// the database restarting: this kill goes unmeasured
			System.out.println("chaos: takeover after " + name + " not measured: " + ex.getMessage());
			this.unfinished.incrementAndGet();
			return;
		}
		String times = "claimable after " + millis(allClaimable) + ", the first started elsewhere after " + millis(first);
		if (left > 0) {
			this.unfinished.incrementAndGet();
			System.out.println("chaos: takeover after " + name + ": " + left + " of its " + held.size()
					+ " claims not started elsewhere within " + GIVE_UP.toSeconds() + " s (" + times + ")");
			return;
		}
		Duration all = Duration.ofNanos(System.nanoTime() - killedAt);
		this.claimable.add(allClaimable);
		this.firstStarted.add(first);
		this.allStarted.add(all);
		System.out.println("chaos: takeover after " + name + ": its " + held.size() + " claim(s) " + times
				+ ", all started elsewhere after " + all.toMillis() + " ms");
	}

	private static String millis(Duration duration) {
		return (duration != null) ? duration.toMillis() + " ms" : "-";
	}

	/** Waits for the measurements still going on, and answers p50 and max of each figure. */
	String summary() {
		for (Thread thread : this.measuring) {
			try {
				thread.join(GIVE_UP.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		String others = ((this.idle.get() > 0) ? "; " + this.idle + " kill(s) found the process holding no claims" : "")
				+ ((this.unfinished.get() > 0) ? "; " + this.unfinished + " kill(s) not fully taken over within "
						+ GIVE_UP.toSeconds() + " s" : "");
		if (this.allStarted.isEmpty()) {
			return "takeover after a kill: nothing measured" + others;
		}
		return "takeover after a kill, " + this.allStarted.size() + " kill(s): its claims claimable " + stats(this.claimable)
				+ "; the first started elsewhere " + stats(this.firstStarted) + "; all started elsewhere "
				+ stats(this.allStarted) + others;
	}

	private static String stats(List<Duration> durations) {
		List<Long> millis = durations.stream().map(Duration::toMillis).sorted().toList();
		return "p50 " + millis.get((millis.size() - 1) / 2) + " ms, max " + millis.get(millis.size() - 1) + " ms " + millis;
	}

	private static void pause() {
		AppProcess.pause(POLL);
	}

}
