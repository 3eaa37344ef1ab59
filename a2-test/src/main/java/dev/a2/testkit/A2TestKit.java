package dev.a2.testkit;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.a2.A2Exception;
import dev.a2.A2Server;
import dev.a2.DrainActivity;
import dev.a2.ErrorCode;
import dev.a2.Session;
import dev.a2.store.DeadLetter;
import dev.a2.store.WorkStore;
import org.jspecify.annotations.Nullable;

/**
 * Drives A2 in a test: {@link #drain()} runs the due work until the drainer is idle, {@link #advance}
 * moves the virtual clock through every instant where work falls due, and faults are staged per
 * consumer. Time moves only when the test moves it; nothing here sleeps or polls the tables: waits
 * are woken by the drainer's own progress.
 * <pre>{@code
 * kit.session("chat", "room-1").append(NewEvent.of("message.sent", new MessageSent("hi")));
 * kit.drain();
 * assertThat(kit.session("chat", "room-1")).hasEventTypes("message.sent", "message.delivered");
 * }</pre>
 */
public final class A2TestKit {

	/** How long {@link #drain()} waits for the drainer in real time before it fails. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

	private static final int REPORTED = 50;

	private final VirtualClock clock;

	private final FaultyDataSource dataSource;

	private final Supplier<A2Server> servers;

	private final KitInterceptor interceptor;

	private final Object progress = new Object();

	private volatile @Nullable A2Server server;

	private volatile Duration timeout = DEFAULT_TIMEOUT;

	/**
	 * The dead letters there were when the test began: the schema is the test class's, so its earlier
	 * tests' dead letters are still stored, and are not this test's.
	 */
	private volatile Set<DeadLetter> earlierDeadLetters = Set.of();

	A2TestKit(VirtualClock clock, FaultyDataSource dataSource, Supplier<A2Server> servers) {
		this.clock = clock;
		this.dataSource = dataSource;
		this.servers = servers;
		this.interceptor = new KitInterceptor(clock, () -> server().drainSettings(), this::wake);
	}

	KitInterceptor interceptor() {
		return this.interceptor;
	}

	/** The application's server, on the test's schema, with a manual drainer and the virtual clock. */
	public A2Server server() {
		A2Server current = this.server;
		if (current == null) {
			synchronized (this) {
				current = this.server;
				if (current == null) {
					current = this.servers.get();
					current.onDrainProgress(this::wake);
					this.server = current;
				}
			}
		}
		return current;
	}

	/** A session of a contract (see {@link A2Server#session}). */
	public Session session(String contract, String sessionId) {
		return server().session(contract, sessionId);
	}

	/** The virtual clock: A2's leases, back-offs, schedules and the events' {@code createdAt} read it. */
	public VirtualClock clock() {
		return this.clock;
	}

	/** The virtual now. */
	public Instant now() {
		return this.clock.instant();
	}

	/** The test's data source (its own schema, A2's tables migrated). */
	public DataSource dataSource() {
		return this.dataSource;
	}

	/** Every run of a consumer's code since the test started. */
	public RunJournal journal() {
		return this.interceptor.journal();
	}

	/** How long {@link #drain()} waits in real time before it fails; 10 s by default. */
	public A2TestKit timeout(Duration timeout) {
		this.timeout = timeout;
		return this;
	}

	/**
	 * Runs the work due at the current virtual instant until the drainer is idle: what appends started,
	 * what a sweep finds due (passed back-offs, lapsed leases, scheduled tasks), and whatever that work
	 * creates in turn. Runs the kit stalls do not count.
	 * @throws AssertionError when it is not idle within the timeout, listing the running attempts and
	 * the pending work
	 */
	public A2TestKit drain() {
		return drain(this.timeout);
	}

	/** {@link #drain()}, waiting at most {@code timeout} in real time. */
	public A2TestKit drain(Duration timeout) {
		A2Server server = server();
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			int runsBefore = journal().size();
			boolean refused = false;
			try {
				server.sweep();
			}
			catch (A2Exception ex) {
				if (ex.code() != ErrorCode.STORE_UNAVAILABLE) {
					throw ex;
				}
				// the store is down for a few more operations (storeUnavailable): the next round sweeps again
				refused = true;
			}
			if (!awaitSettled(server, deadline)) {
				throw new AssertionError(report("the drainer did not get idle within " + timeout.toMillis() + " ms"));
			}
			// a round that started no run is the end, unless work is still runnable at this instant: the store
			// refused a claim or a scheduled task's delivery (the drainer logs those and goes on), and the next
			// round gets it. A session whose lane waits behind a dead letter is found due by every sweep and
			// claims nothing, but its work is not runnable.
			if (journal().size() == runsBefore && !refused && !runnableNow()) {
				return this;
			}
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError(report("the drainer kept finding due work for " + timeout.toMillis() + " ms"));
			}
		}
	}

	/** Whether work may run at the virtual now; {@code true} when the store cannot tell. */
	private boolean runnableNow() {
		try {
			return !runnable().isEmpty();
		}
		catch (A2Exception ex) {
			if (ex.code() != ErrorCode.STORE_UNAVAILABLE) {
				throw ex;
			}
			return true;
		}
	}

	/** The work that may run at the virtual now: not dead, not blocked, past its back-off and lease. */
	List<WorkStore.Upcoming> runnable() {
		Instant now = this.clock.instant();
		return server().upcomingWork(1000)
			.stream()
			.filter((work) -> work.runnableAt() != null && !work.runnableAt().isAfter(now))
			.toList();
	}

	/**
	 * Moves the clock forward by {@code duration}, stopping at every instant on the way where work
	 * falls due (a back-off ends, a lease lapses, a scheduled task is due), in order, and draining at
	 * each; then drains at the end.
	 */
	public A2TestKit advance(Duration duration) {
		Instant target = this.clock.instant().plus(requirePositive(duration));
		drain();
		visitDueThrough(target);
		this.clock.moveTo(target);
		return drain();
	}

	/**
	 * Like {@link #advance}, but stops at the last instant where work fell due within {@code limit}
	 * (or stays where it is when none did): for "run every retry" or "fire every schedule".
	 * @return the virtual now after it
	 */
	public Instant advanceThroughDue(Duration limit) {
		Instant target = this.clock.instant().plus(requirePositive(limit));
		drain();
		visitDueThrough(target);
		return this.clock.instant();
	}

	/** When work next falls due after the virtual now, if anything waits for a time. */
	public Optional<Instant> nextDue() {
		return server().nextDue();
	}

	private void visitDueThrough(Instant target) {
		while (true) {
			Optional<Instant> next = server().nextDue();
			if (next.isEmpty() || next.get().isAfter(target)) {
				return;
			}
			this.clock.moveTo(next.get());
			drain();
		}
	}

	/**
	 * Waits until a run of {@code consumer} is in its code (started, not ended), woken by the run
	 * itself: to act while it runs, e.g. append the event that aborts it.
	 * @throws AssertionError when none is within the timeout
	 */
	public A2TestKit awaitRunning(String consumer) {
		consumer(consumer);
		long deadline = System.nanoTime() + this.timeout.toNanos();
		synchronized (this.progress) {
			while (journal().runs(consumer).stream().noneMatch((run) -> run.outcome() == RunOutcome.RUNNING)) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					throw new AssertionError(report("no run of consumer '" + consumer + "' started within "
							+ this.timeout.toMillis() + " ms"));
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this.progress, left);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new AssertionError("interrupted while waiting for a run of '" + consumer + "'", ex);
				}
			}
		}
		return this;
	}

	/**
	 * Faults for the next runs of a consumer of the application: {@code "contract/name"}, or its name
	 * alone where no other contract has a consumer of that name.
	 * @throws IllegalArgumentException when no consumer of this test has that name, or several do
	 */
	public ConsumerFaults consumer(String name) {
		return new ConsumerFaults(ConsumerName.resolve(name, server().consumers()));
	}

	/**
	 * Makes the store unavailable for its next {@code operations} connections, as an unreachable
	 * PostgreSQL would: appends, reads, claims and finishes fail with {@code STORE_UNAVAILABLE} and
	 * change nothing.
	 */
	public A2TestKit storeUnavailable(int operations) {
		this.dataSource.refuseNext(operations);
		return this;
	}

	/** Forgets the faults and the journal, lets stalled runs go, and makes the store available. */
	public void reset() {
		this.dataSource.refuseNext(0);
		this.interceptor.reset();
		this.earlierDeadLetters = Set.copyOf(allDeadLetters());
	}

	/**
	 * The dead letters of this test, newest first: those there were when it began (of the class's
	 * earlier tests, which share its schema) are left out, unless this test made them again.
	 */
	List<DeadLetter> deadLetters() {
		Set<DeadLetter> earlier = this.earlierDeadLetters;
		return allDeadLetters().stream().filter((dead) -> !earlier.contains(dead)).toList();
	}

	private List<DeadLetter> allDeadLetters() {
		return server().deadLetters(null, null, null, 1000);
	}

	/** Lets every stalled run go on. */
	public void releaseStalled() {
		this.interceptor.releaseAll();
	}

	private boolean settled(DrainActivity activity) {
		return activity.draining() == 0 && activity.finishing() == 0
				&& activity.running().stream().allMatch(this.interceptor::isStalled);
	}

	private boolean awaitSettled(A2Server server, long deadline) {
		synchronized (this.progress) {
			while (!settled(server.drainActivity())) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this.progress, left);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			}
			return true;
		}
	}

	private void wake() {
		synchronized (this.progress) {
			this.progress.notifyAll();
		}
	}

	/** What the drainer does and what waits, for a failure's message. */
	String report(String what) {
		A2Server server = server();
		StringBuilder text = new StringBuilder(what).append(" (virtual time ").append(this.clock.instant()).append(')');
		DrainActivity activity = server.drainActivity();
		text.append("\nrunning attempts:");
		if (activity.running().isEmpty()) {
			text.append(" none");
		}
		for (DrainActivity.RunningAttempt running : activity.running()) {
			text.append("\n  - ").append(running).append(this.interceptor.isStalled(running) ? " [stalled by the kit]" : "");
		}
		if (activity.draining() > 0 || activity.finishing() > 0) {
			text.append("\nsessions being claimed: ").append(activity.draining()).append("; finishes being written: ")
				.append(activity.finishing());
		}
		text.append("\npending work:");
		try {
			List<WorkStore.Upcoming> upcoming = server.upcomingWork(REPORTED);
			if (upcoming.isEmpty()) {
				text.append(" none");
			}
			upcoming.forEach((work) -> text.append("\n  - ").append(work));
		}
		catch (RuntimeException ex) {
			text.append(" (could not be read: ").append(ex.getMessage()).append(')');
		}
		Map<String, List<KitInterceptor.Fault>> unused = this.interceptor.unusedFaults();
		if (!unused.isEmpty()) {
			text.append("\nfaults no run took yet: ").append(unused);
		}
		List<RunRecord> runs = journal().runs();
		text.append("\nruns so far:");
		if (runs.isEmpty()) {
			text.append(" none");
		}
		runs.subList(Math.max(0, runs.size() - REPORTED), runs.size()).forEach((run) -> text.append("\n  - ").append(run));
		return text.toString();
	}

	private static Duration requirePositive(Duration duration) {
		if (duration.isNegative()) {
			throw new IllegalArgumentException("time only moves forward; was asked to move by " + duration);
		}
		return duration;
	}

	/** The faults of one consumer's next runs, taken in the order they were asked for. */
	public final class ConsumerFaults {

		/** As {@code "contract/name"}. */
		private final String consumer;

		ConsumerFaults(String consumer) {
			this.consumer = consumer;
		}

		/** Its next {@code runs} runs throw {@code exception} instead of running the code. */
		public ConsumerFaults failNext(int runs, Exception exception) {
			for (int i = 0; i < runs; i++) {
				A2TestKit.this.interceptor.add(this.consumer, new KitInterceptor.Fault.Fail(exception));
			}
			return this;
		}

		/** Its next {@code runs} runs throw an {@link IllegalStateException}. */
		public ConsumerFaults failNext(int runs) {
			return failNext(runs, new IllegalStateException("failure staged by the test kit"));
		}

		/**
		 * Its next run runs the code (what it appends is written), then its instance "crashes": the
		 * finish and the events the run returned are lost, the claim is kept until its lease lapses
		 * ({@link A2TestKit#advance} past the lease), and another attempt runs the unit again.
		 */
		public ConsumerFaults crashAfterRun() {
			A2TestKit.this.interceptor.add(this.consumer, new KitInterceptor.Fault.Crash());
			return this;
		}

		/**
		 * Its next run stops before its code, as if its instance froze: no heartbeat renews its lease
		 * ({@link A2TestKit#drain()} does not wait for it). Once the lease lapses
		 * ({@link A2TestKit#advance} past the lease) another attempt takes the unit over, and then the
		 * stalled attempt goes on as a zombie: it runs, and its finish is refused.
		 */
		public ConsumerFaults stallNext() {
			A2TestKit.this.interceptor.add(this.consumer, new KitInterceptor.Fault.Stall());
			return this;
		}

	}

}
