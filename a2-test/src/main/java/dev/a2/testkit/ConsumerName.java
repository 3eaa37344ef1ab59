package dev.a2.testkit;

import java.util.List;

import dev.a2.Consumer;

/**
 * How a test names a consumer: {@code "contract/name"}, as {@code a2.drain.consumers} does, or the
 * name alone where no other contract has a consumer of that name (names are unique per contract).
 */
final class ConsumerName {

	private ConsumerName() {
	}

	/** Whether {@code asked} names the consumer {@code name} of {@code contract}. */
	static boolean matches(String asked, String contract, String name) {
		int slash = asked.indexOf('/');
		return (slash < 0) ? asked.equals(name)
				: asked.substring(0, slash).equals(contract) && asked.substring(slash + 1).equals(name);
	}

	/**
	 * The one consumer among {@code running} that {@code asked} names, as {@code "contract/name"}.
	 * @throws IllegalArgumentException when it names none, or a name two contracts have
	 */
	static String resolve(String asked, List<Consumer> running) {
		List<Consumer> named = running.stream().filter((c) -> matches(asked, c.contract(), c.name())).toList();
		List<String> all = running.stream().map((c) -> c.contract() + "/" + c.name()).toList();
		if (named.isEmpty()) {
			throw new IllegalArgumentException("no consumer named '" + asked + "' runs in this test; running: " + all);
		}
		if (named.size() > 1) {
			throw new IllegalArgumentException("consumers of several contracts are named '" + asked + "': "
					+ named.stream().map((c) -> c.contract() + "/" + c.name()).toList() + "; name one as contract/name");
		}
		return named.get(0).contract() + "/" + named.get(0).name();
	}

}
