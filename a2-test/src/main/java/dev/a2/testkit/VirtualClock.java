package dev.a2.testkit;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The clock of a test: it stands still until the test moves it (through {@link A2TestKit#advance}),
 * so leases lapse, back-offs pass and schedules fall due only when the test says.
 */
public final class VirtualClock extends Clock {

	/** Where every test's time starts. */
	public static final Instant START = Instant.parse("2030-01-01T00:00:00Z");

	private final AtomicReference<Instant> now;

	public VirtualClock() {
		this(START);
	}

	public VirtualClock(Instant start) {
		this.now = new AtomicReference<>(start);
	}

	@Override
	public Instant instant() {
		return this.now.get();
	}

	/** Moves the clock to {@code instant}; never back. */
	void moveTo(Instant instant) {
		this.now.updateAndGet((current) -> {
			if (instant.isBefore(current)) {
				throw new IllegalArgumentException("the virtual clock never goes back: it is " + current + ", not " + instant);
			}
			return instant;
		});
	}

	@Override
	public ZoneId getZone() {
		return ZoneOffset.UTC;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		return this;
	}

	@Override
	public String toString() {
		return "VirtualClock[" + instant() + "]";
	}

}
