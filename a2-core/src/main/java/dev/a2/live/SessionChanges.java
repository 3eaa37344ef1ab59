package dev.a2.live;

import java.util.function.Consumer;

/**
 * Where an instance says that a session changed and hears about changes, its own and every other
 * instance's. A change is told to this instance's listeners at once, and to other instances as soon
 * as the implementation can; listeners run on the implementation's thread and must not block.
 */
public interface SessionChanges extends AutoCloseable {

	/** Tells every listener, here and on other instances, that the session changed. */
	void publish(SessionChange.Kind kind, String contract, String session);

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
