package dev.a2.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * How long a killed process's work waits before another process starts it: the claims the dead
 * process held (rows whose owner's liveness lock ended with it), from the kill until another process
 * claimed each (its token changed, or the unit is done already). Read with SQL at 50 ms intervals.
 */
final class Takeovers {

	private static final Duration POLL = Duration.ofMillis(50);

	private static final Duration GIVE_UP = Duration.ofSeconds(90);

	/** The owner ids whose liveness lock is held now (the advisory locks of the schema's key space). */
	private static final String LIVE_OWNERS = """
			SELECT objid::bigint FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND objsubid = 2
			  AND classid = (hashtext(current_schema()) & 2147483647)::oid
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())""";

	/** The claims of owners, by a key naming the unit or cursor, with their tokens. */
	private static final String CLAIMS_OF = """
			SELECT 'u/' || contract || '/' || session_id || '/' || consumer || '/' || idx AS key, claim::text
			FROM a2_work WHERE claim IS NOT NULL AND owner = ANY(?::int[])
			UNION ALL
			SELECT 'c/' || contract || '/' || session_id || '/' || consumer, claim::text
			FROM a2_cursor WHERE claim IS NOT NULL AND owner = ANY(?::int[])""";

	private static final String TOKEN = """
			SELECT claim::text FROM a2_work
			WHERE 'u/' || contract || '/' || session_id || '/' || consumer || '/' || idx = ?
			UNION ALL
			SELECT claim::text FROM a2_cursor WHERE 'c/' || contract || '/' || session_id || '/' || consumer = ?""";

	private final List<Duration> measured = new ArrayList<>();

	private int idle;

	/**
	 * Kills through {@code kill} and measures the takeover of what the killed process held.
	 * @return a line saying what was measured
	 */
	String killAndMeasure(JdbcTemplate jdbc, Runnable kill) {
		Set<Long> before = new HashSet<>(jdbc.queryForList(LIVE_OWNERS, Long.class));
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
		String owners = "{" + String.join(",", gone.stream().map(String::valueOf).toList()) + "}";
		Map<String, String> held = new HashMap<>();
		jdbc.query(CLAIMS_OF, (rs) -> {
			held.put(rs.getString(1), rs.getString(2));
		}, owners, owners);
		if (held.isEmpty()) {
			this.idle++;
			return "it held no claims (or they were taken over before the first look)";
		}
		Map<String, String> waiting = new HashMap<>(held);
		while (!waiting.isEmpty() && System.nanoTime() - killedAt < GIVE_UP.toNanos()) {
			waiting.entrySet().removeIf((entry) -> {
				List<String> token = jdbc.queryForList(TOKEN, String.class, entry.getKey(), entry.getKey());
				return token.isEmpty() || !entry.getValue().equals(token.get(0));
			});
			if (!waiting.isEmpty()) {
				pause();
			}
		}
		if (!waiting.isEmpty()) {
			return waiting.size() + " of its " + held.size() + " claims not taken over within " + GIVE_UP.toSeconds() + " s";
		}
		Duration took = Duration.ofNanos(System.nanoTime() - killedAt);
		this.measured.add(took);
		return "its " + held.size() + " claim(s) taken over by another process " + took.toMillis() + " ms after the kill";
	}

	List<Duration> measured() {
		return this.measured;
	}

	/** p50 and max of the measured takeovers, for the run's summary. */
	String summary() {
		if (this.measured.isEmpty()) {
			return "takeover after a kill: nothing measured (" + this.idle + " kill(s) found the process holding no claims)";
		}
		List<Long> millis = this.measured.stream().map(Duration::toMillis).sorted().toList();
		long p50 = millis.get((millis.size() - 1) / 2);
		return "takeover after a kill (the kill to another process claiming all the killed one held), " + millis.size()
				+ " kill(s): p50 " + p50 + " ms, max " + millis.get(millis.size() - 1) + " ms " + millis
				+ ((this.idle > 0) ? "; " + this.idle + " kill(s) found it holding no claims" : "");
	}

	private static void pause() {
		AppProcess.pause(POLL);
	}

}
