package dev.a2.live;

import java.util.function.Consumer;

/**
 * Where an instance says that a session changed and hears about changes, its own and every other
 * instance's. A change is told to this instance's listeners at once, and to other instances as soon
 * as the implementation can; listeners run on the implementation's thread and must not block.
 */
public interface SessionChanges extends AutoCloseable {

	/**
	 * Tells this instance's listeners that the session changed, and other instances' listeners as
	 * soon as it can: of {@link SessionChange.Kind#WORK work} and {@link SessionChange.Kind#CLEARED
	 * clears} every instance, of events and presence at least the instances that
	 * {@link #follow follow} the session.
	 */
	void publish(SessionChange.Kind kind, String contract, String session);

	/**
	 * Says that this instance follows a session (it has readers of it, or runs that its events can
	 * abort), until the answer is closed; follows of one session add up. Other instances then tell
	 * it the session's events and presence, and tell it once that the session changed when they
	 * start to: changes made before that are read then. An implementation that tells every change
	 * to every instance need not count them.
	 */
	default AutoCloseable follow(String contract, String session) {
		return () -> {
		};
	}

	/**
	 * Listens to every change until the answer is closed. Besides the changes, a listener is told
	 * {@code null} when changes may have been missed (the connection to the other instances was lost
	 * or came back): it should read everything it follows again.
	 */
	AutoCloseable listen(Consumer<SessionChange> listener);

	/** Whether changes made by other instances arrive now; when not, readers should poll. */
	boolean connected();

	@Override
	void close();

	/** Changes of this instance only: for a single instance, and for tests. */
	static SessionChanges local() {
		return new LocalSessionChanges();
	}

}
