package dev.a2.chaos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the database holds at the end of a run, checked against what the writers were promised
 * and what every consumer must have done: read with SQL from A2's tables, the way an operator
 * would audit them.
 */
final class Verdict {

	/** The consumers of {@code OrderConsumers}, each owing one effect per order (picky: per healthy order). */
	static final List<String> CONSUMERS = List.of("independent", "keyed", "cursor", "batch", "appender", "picky");

	private record Stored(String session, long index, String id, String type, String trigger, long triggerIndex,
			String consumer, String customer, boolean poison) {
	}

	final long events;

	final long effects;

	/** Acknowledged events not stored (or at another index), missing effects, gaps in a log. */
	final long lost;

	/** Events or effects stored more than once. */
	final long duplicated;

	/** Work not done (pending, claimed, or a lane blocked) where nothing should be left. */
	final long stuck;

	/** Effects of a keyed lane or cursor out of their triggers' order. */
	final long outOfOrder;

	/** Dead letters of healthy orders, or poison orders without a dead letter. */
	final long wrongDeadLetters;

	final long deadLetters;

	final List<String> findings;

	private Verdict(long events, long effects, long lost, long duplicated, long stuck, long outOfOrder,
			long wrongDeadLetters, long deadLetters, List<String> findings) {
		this.events = events;
		this.effects = effects;
		this.lost = lost;
		this.duplicated = duplicated;
		this.stuck = stuck;
		this.outOfOrder = outOfOrder;
		this.wrongDeadLetters = wrongDeadLetters;
		this.deadLetters = deadLetters;
		this.findings = findings;
	}

	boolean clean() {
		return this.lost == 0 && this.duplicated == 0 && this.stuck == 0 && this.outOfOrder == 0
				&& this.wrongDeadLetters == 0;
	}

	/** Whether consumers are done: no pending work, every cursor at its target. Dead letters stay. */
	static long pendingWork(JdbcTemplate jdbc) {
		Long work = jdbc.queryForObject("SELECT count(*) FROM a2_work WHERE NOT dead", Long.class);
		Long cursors = jdbc.queryForObject("SELECT count(*) FROM a2_cursor WHERE NOT dead AND position < target", Long.class);
		return work + cursors;
	}

	static Verdict check(JdbcTemplate jdbc, Ledger ledger) {
		List<String> findings = new ArrayList<>();
		List<Stored> rows = jdbc.query("""
				SELECT session_id, idx, id, type, payload->>'trigger' AS trigger,
				       coalesce((payload->>'triggerIndex')::bigint, 0) AS trigger_index,
				       payload->>'consumer' AS consumer, payload->>'customer' AS customer,
				       coalesce((payload->>'poison')::boolean, false) AS poison
				FROM a2_event WHERE contract = 'orders' ORDER BY session_id, idx
				""", (rs, n) -> new Stored(rs.getString("session_id"), rs.getLong("idx"), rs.getString("id"),
				rs.getString("type"), rs.getString("trigger"), rs.getLong("trigger_index"), rs.getString("consumer"),
				rs.getString("customer"), rs.getBoolean("poison")));

		long lost = 0;
		long duplicated = 0;

		// every acknowledged push is stored, once, at the index its answer gave
		Map<String, List<Stored>> byId = new HashMap<>();
		for (Stored row : rows) {
			byId.computeIfAbsent(row.session() + "/" + row.id(), (k) -> new ArrayList<>()).add(row);
		}
		for (Ledger.Ack ack : ledger.acks().values()) {
			List<Stored> stored = byId.getOrDefault(ack.session() + "/" + ack.id(), List.of());
			if (stored.isEmpty()) {
				lost++;
				note(findings, "acknowledged but not stored: " + ack);
			}
			else if (stored.size() > 1) {
				duplicated += stored.size() - 1;
				note(findings, "stored " + stored.size() + " times: " + ack);
			}
			else if (stored.get(0).index() != ack.index()) {
				lost++;
				note(findings, "acknowledged at " + ack.index() + " but stored at " + stored.get(0).index() + ": " + ack);
			}
		}

		// indexes 1..last_index without gaps, and a2_session agrees
		Map<String, Long> lastIndex = new HashMap<>();
		jdbc.query("SELECT session_id, last_index FROM a2_session WHERE contract = 'orders'",
				(rs) -> {
					lastIndex.put(rs.getString(1), rs.getLong(2));
				});
		Map<String, List<Stored>> bySession = new TreeMap<>();
		rows.forEach((row) -> bySession.computeIfAbsent(row.session(), (k) -> new ArrayList<>()).add(row));
		for (var entry : bySession.entrySet()) {
			List<Stored> log = entry.getValue();
			for (int i = 0; i < log.size(); i++) {
				if (log.get(i).index() != i + 1) {
					lost++;
					note(findings, "session " + entry.getKey() + " has index " + log.get(i).index() + " at position " + (i + 1));
					break;
				}
			}
			long last = lastIndex.getOrDefault(entry.getKey(), 0L);
			if (last != log.size()) {
				lost++;
				note(findings, "session " + entry.getKey() + " says last index " + last + " but holds " + log.size() + " events");
			}
		}

		// every order has one effect of every consumer (picky: of its healthy orders)
		Map<String, Stored> orders = new HashMap<>();
		Map<String, Integer> effectCount = new HashMap<>();
		List<Stored> effects = new ArrayList<>();
		for (Stored row : rows) {
			if (row.type().equals("order.placed")) {
				orders.put(row.session() + "/" + row.id(), row);
			}
			else {
				effects.add(row);
				effectCount.merge(row.session() + "/" + row.trigger() + "/" + row.consumer(), 1, Integer::sum);
			}
		}
		for (Stored order : orders.values()) {
			for (String consumer : CONSUMERS) {
				int count = effectCount.getOrDefault(order.session() + "/" + order.id() + "/" + consumer, 0);
				boolean owed = !(consumer.equals("picky") && order.poison());
				if (owed && count == 0) {
					lost++;
					note(findings, "no effect of " + consumer + " for " + order.session() + "/" + order.id());
				}
				if (count > (owed ? 1 : 0)) {
					duplicated += count - (owed ? 1 : 0);
					note(findings, count + " effects of " + consumer + " for " + order.session() + "/" + order.id());
				}
			}
		}
		for (Stored effect : effects) {
			Stored order = orders.get(effect.session() + "/" + effect.trigger());
			if (order == null || order.index() != effect.triggerIndex()) {
				duplicated++;
				note(findings, "an effect of no stored order: " + effect);
			}
		}

		// a keyed lane runs a customer's orders in order; a cursor (batched or not) runs a session's in order
		long outOfOrder = 0;
		Map<String, Long> lastTrigger = new HashMap<>();
		for (Stored effect : effects) {
			String lane = switch (effect.consumer()) {
				case "keyed" -> effect.session() + "/keyed/" + effect.customer();
				case "cursor" -> effect.session() + "/cursor";
				case "batch" -> effect.session() + "/batch";
				default -> null;
			};
			if (lane == null) {
				continue;
			}
			Long previous = lastTrigger.put(lane, effect.triggerIndex());
			if (previous != null && previous >= effect.triggerIndex()) {
				outOfOrder++;
				note(findings, "lane " + lane + " ran " + effect.triggerIndex() + " after " + previous);
			}
		}

		// nothing left to do, nothing held: leases of dead attempts were taken over
		long stuck = 0;
		List<String> pending = jdbc.query("""
				SELECT consumer || ' ' || session_id || '#' || idx || ' attempt ' || attempt || ' failures ' || failures
				       || CASE WHEN claim IS NULL THEN '' ELSE ' claimed until ' || lease_until END
				FROM a2_work WHERE NOT dead OR claim IS NOT NULL
				UNION ALL
				SELECT consumer || ' ' || session_id || ' cursor ' || position || '/' || target || ' attempt ' || attempt
				       || CASE WHEN claim IS NULL THEN '' ELSE ' claimed until ' || lease_until END
				FROM a2_cursor WHERE (NOT dead AND position < target) OR claim IS NOT NULL
				""", (rs, n) -> rs.getString(1));
		stuck += pending.size();
		pending.forEach((p) -> note(findings, "not done: " + p));

		// dead letters exactly where the consumer really failed: picky on poison orders
		long wrongDeadLetters = 0;
		List<String> dead = jdbc.query("""
				SELECT w.consumer, w.session_id, w.idx, e.id, coalesce((e.payload->>'poison')::boolean, false), w.last_error
				FROM a2_work w JOIN a2_event e USING (contract, session_id, idx) WHERE w.dead
				UNION ALL
				SELECT c.consumer, c.session_id, c.failed_idx, e.id, coalesce((e.payload->>'poison')::boolean, false), c.last_error
				FROM a2_cursor c LEFT JOIN a2_event e ON e.contract = c.contract AND e.session_id = c.session_id AND e.idx = c.failed_idx
				WHERE c.dead
				""", (rs, n) -> {
			boolean expected = rs.getString(1).equals("picky") && rs.getBoolean(5);
			return (expected ? "" : "!") + rs.getString(2) + "/" + rs.getString(4) + " " + rs.getString(1) + ": "
					+ rs.getString(6);
		});
		Set<String> deadPoison = new HashSet<>();
		for (String d : dead) {
			if (d.startsWith("!")) {
				wrongDeadLetters++;
				note(findings, "dead letter of a healthy order: " + d.substring(1));
			}
			else {
				deadPoison.add(d.substring(0, d.indexOf(' ')));
			}
		}
		for (Stored order : orders.values()) {
			if (order.poison() && !deadPoison.contains(order.session() + "/" + order.id())) {
				wrongDeadLetters++;
				note(findings, "poison order without a dead letter: " + order.session() + "/" + order.id());
			}
		}
		return new Verdict(orders.size(), effects.size(), lost, duplicated, stuck, outOfOrder, wrongDeadLetters, dead.size(),
				findings);
	}

	private static void note(List<String> findings, String finding) {
		if (findings.size() < 50) {
			findings.add(finding);
		}
	}

}
