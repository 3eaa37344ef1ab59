package dev.a2.live;

import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * The feeds of the sessions this instance's subscribers follow, one per session, shared by its
 * subscribers and dropped with the last of them.
 */
final class SharedFeeds<F extends SharedFeeds.Feed> {

	/** A session's feed; its subscriber count is guarded by the feed itself. */
	abstract static class Feed {

		final Key key;

		int subscribers;

		boolean closed;

		Feed(Key key) {
			this.key = key;
		}

	}

	record Key(String contract, String session) {
	}

	private final Map<Key, F> feeds = new ConcurrentHashMap<>();

	private final Function<Key, F> create;

	SharedFeeds(Function<Key, F> create) {
		this.create = create;
	}

	/** The session's feed, counting one more subscriber. */
	F acquire(String contract, String session) {
		while (true) {
			F feed = this.feeds.computeIfAbsent(new Key(contract, session), this.create);
			synchronized (feed) {
				if (!feed.closed) {
					feed.subscribers++;
					return feed;
				}
			}
		}
	}

	/** One subscriber less; the last one drops the feed. */
	void release(F feed) {
		synchronized (feed) {
			if (--feed.subscribers > 0) {
				return;
			}
			feed.closed = true;
		}
		this.feeds.remove(feed.key, feed);
	}

	@Nullable F get(String contract, String session) {
		return this.feeds.get(new Key(contract, session));
	}

	Collection<F> all() {
		return this.feeds.values();
	}

	int size() {
		return this.feeds.size();
	}

	static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// nothing to release
		}
	}

}
