package dev.a2.live;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The listeners of a {@link SessionChanges}: one listener that fails does not keep the change
 * from the others.
 */
public abstract class SessionChangeListeners {

	private static final Log logger = LogFactory.getLog(SessionChangeListeners.class);

	private final CopyOnWriteArrayList<Consumer<@Nullable SessionChange>> listeners = new CopyOnWriteArrayList<>();

	public AutoCloseable listen(Consumer<SessionChange> listener) {
		@SuppressWarnings("unchecked")
		Consumer<@Nullable SessionChange> added = (Consumer<@Nullable SessionChange>) (Consumer<?>) listener;
		this.listeners.add(added);
		return () -> this.listeners.remove(added);
	}

	/** Tells every listener; {@code null} means "changes may have been missed". */
	protected void tell(@Nullable SessionChange change) {
		for (Consumer<@Nullable SessionChange> listener : this.listeners) {
			try {
				listener.accept(change);
			}
			catch (RuntimeException ex) {
				logger.warn("A listener of session changes failed on " + change, ex);
			}
		}
	}

}
