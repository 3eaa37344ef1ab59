package dev.a2.drain;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.a2.store.Claim;
import dev.a2.store.EventToStore;
import dev.a2.store.StoredEvent;
import dev.a2.store.WorkLease;
import dev.a2.store.WorkUnit;
import org.jspecify.annotations.Nullable;

/**
 * The units one append stores already leased to this instance, on run permits taken before it:
 * once the append commits, their runs start here with no claim in between (the claim would be the
 * largest cost between an append and its handler). Exactly one of {@link #start} and
 * {@link #abandon} gives the permits back. Internal to A2.
 */
public final class AppendLeases {

	private final ClaimLoops loops;

	private final Clock clock;

	private final String contract;

	private final List<EventToStore> events;

	/** Per event id, the consumers whose unit it leased and their tokens. */
	private final Map<String, List<Leased>> leased;

	private final Instant until;

	private final @Nullable Integer owner;

	private final boolean leftUnleased;

	private final int permits;

	private boolean settled;

	private AppendLeases(ClaimLoops loops, Clock clock, String contract, List<EventToStore> events,
			Map<String, List<Leased>> leased, Instant until, @Nullable Integer owner, boolean leftUnleased, int permits) {
		this.loops = loops;
		this.clock = clock;
		this.contract = contract;
		this.events = events;
		this.leased = leased;
		this.until = until;
		this.owner = owner;
		this.leftUnleased = leftUnleased;
		this.permits = permits;
	}

	/**
	 * Leases the independent-lane units of consumers this instance runs, one per free permit, in the
	 * order of the events; {@code null} when it leases none.
	 */
	static @Nullable AppendLeases take(ClaimLoops loops, DrainHost host, String contract, List<EventToStore> events,
			Instant until, @Nullable Integer owner) {
		int wanted = 0;
		for (EventToStore event : events) {
			for (WorkUnit unit : event.work()) {
				wanted += leasable(host, contract, unit) ? 1 : 0;
			}
		}
		int permits = (wanted > 0) ? loops.reserveAhead(wanted) : 0;
		if (permits == 0) {
			return null;
		}
		int left = permits;
		boolean leftUnleased = false;
		Map<String, List<Leased>> leased = new HashMap<>();
		List<EventToStore> withLeases = new ArrayList<>(events.size());
		for (EventToStore event : events) {
			List<WorkUnit> work = new ArrayList<>(event.work().size());
			for (WorkUnit unit : event.work()) {
				if (left > 0 && leasable(host, contract, unit)) {
					UUID token = UUID.randomUUID();
					work.add(unit.leased(new WorkLease(token, until, owner)));
					leased.computeIfAbsent(event.id(), (id) -> new ArrayList<>()).add(new Leased(unit.consumer(), token));
					left--;
				}
				else {
					work.add(unit);
					leftUnleased = true;
				}
			}
			withLeases.add(new EventToStore(event.id(), event.type(), event.payload(), event.cause(), work));
		}
		return new AppendLeases(loops, host.clock(), contract, withLeases, leased, until, owner, leftUnleased, permits);
	}

	/** A unit with no lane key, of a consumer registered here: nothing before it in the session holds it back. */
	private static boolean leasable(DrainHost host, String contract, WorkUnit unit) {
		return !unit.cursor() && unit.laneKey() == null && host.consumer(contract, unit.consumer()) != null;
	}

	/** The events to append, their leased units marked. */
	public List<EventToStore> events() {
		return this.events;
	}

	/** Whether some work of the append was left for a claim: the session still needs draining. */
	public boolean leftUnleased() {
		return this.leftUnleased;
	}

	/**
	 * Starts the leased units of the events the append stored now (an event the session had already is
	 * stored with none of them), and gives back the permits it does not use. A lease that lapsed
	 * while the append ran is left to be taken over, as any lapsed lease is.
	 * @return whether the session still needs draining here: a lease lapsed before its run could start
	 */
	public boolean start(String session, List<StoredEvent> storedNow) {
		if (this.settled) {
			return false;
		}
		boolean lapsed = !this.clock.instant().isBefore(this.until);
		List<Claim> claims = new ArrayList<>();
		if (!lapsed) {
			for (StoredEvent event : storedNow) {
				for (Leased unit : this.leased.getOrDefault(event.id(), List.of())) {
					claims.add(new Claim(this.contract, session, unit.consumer(), false, null, List.of(event), 0, 0, 1, 0,
							unit.token()));
				}
			}
		}
		settle(claims);
		return lapsed && !this.leased.isEmpty();
	}

	/** Gives the permits back unless started: the append failed, or stored no event of its own. */
	public void abandon() {
		if (!this.settled) {
			settle(List.of());
		}
	}

	/** Starts these claims on the reserved permits and gives back the rest, once. */
	private void settle(List<Claim> claims) {
		this.settled = true;
		this.loops.startLeased(claims, this.permits, this.owner);
	}

	private record Leased(String consumer, UUID token) {
	}

}
