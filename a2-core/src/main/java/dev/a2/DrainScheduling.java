package dev.a2;

/**
 * What keeps the drainer going between appends: its own timers, or the application.
 */
public enum DrainScheduling {

	/**
	 * Heartbeats renew the leases of running attempts on a timer of the drainer's own (every
	 * {@link DrainSettings#heartbeat()}), and the Spring Boot starter sweeps every sweep interval.
	 */
	AUTOMATIC,

	/**
	 * No timer: the application calls {@link A2Server#heartbeat()} and {@link A2Server#sweep()} when
	 * it wants them. Appends still start drains at once. For tests on a clock they move themselves
	 * (the test kit), where a timer on real time would renew or lose leases behind the test's back.
	 */
	MANUAL

}
