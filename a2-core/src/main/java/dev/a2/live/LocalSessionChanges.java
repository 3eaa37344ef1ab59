package dev.a2.live;

/** Tells this instance's listeners only. */
final class LocalSessionChanges extends SessionChangeListeners implements SessionChanges {

	@Override
	public void publish(SessionChange.Kind kind, String contract, String session) {
		tell(new SessionChange(kind, contract, session, true));
	}

	@Override
	public boolean connected() {
		return true;
	}

	@Override
	public void close() {
	}

}
