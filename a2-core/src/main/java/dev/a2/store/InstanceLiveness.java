package dev.a2.store;

import org.jspecify.annotations.Nullable;

/**
 * This instance's identity as the store sees it alive: claims record the owner it answers, and are
 * taken over as soon as the store sees that owner gone (the process died, its connection dropped),
 * without waiting for their leases. Closing it gives the identity up.
 */
public interface InstanceLiveness extends AutoCloseable {

	/** A store without liveness: claims hold by their leases alone. */
	InstanceLiveness NONE = new InstanceLiveness() {

		@Override
		public @Nullable Integer owner() {
			return null;
		}

		@Override
		public void close() {
		}

	};

	/**
	 * The owner id claims record now, or {@code null} while this instance holds no identity (its
	 * claims then hold by their leases alone).
	 */
	@Nullable Integer owner();

	@Override
	void close();

}
