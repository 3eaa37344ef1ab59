package dev.a2.testkit;

import dev.a2.Session;

/**
 * AssertJ entry points of the test kit: {@code assertThat(kit)} for the drainer, dead letters and
 * the journal; {@code assertThat(session)} for a session's events and their causes.
 */
public final class A2Assertions {

	private A2Assertions() {
	}

	public static A2TestKitAssert assertThat(A2TestKit kit) {
		return new A2TestKitAssert(kit);
	}

	public static SessionAssert assertThat(Session session) {
		return new SessionAssert(session);
	}

}
