package dev.a2.state;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The latest folded state per (contract, session, reducer), least recently used first out. It holds
 * JSON rather than the state object: folds may change state in place, and a cached object would
 * change with them.
 */
final class StateCache {

	record Entry(long index, String state) {
	}

	private final int capacity;

	private final Map<String, Entry> entries;

	StateCache(int capacity) {
		this.capacity = capacity;
		this.entries = new LinkedHashMap<>(16, 0.75f, true) {
			@Override
			protected boolean removeEldestEntry(Map.Entry<String, StateCache.Entry> eldest) {
				return size() > StateCache.this.capacity;
			}
		};
	}

	static String key(String contract, String session, String reducer) {
		return contract + '\u0000' + session + '\u0000' + reducer;
	}

	synchronized @Nullable Entry get(String key) {
		return this.entries.get(key);
	}

	/** Keeps the newer of what is cached and {@code entry}. */
	synchronized void offer(String key, Entry entry) {
		if (this.capacity == 0) {
			return;
		}
		this.entries.merge(key, entry, (old, offered) -> (offered.index() >= old.index()) ? offered : old);
	}

	synchronized int size() {
		return this.entries.size();
	}

}
