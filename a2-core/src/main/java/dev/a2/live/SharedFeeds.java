package dev.a2.live;

import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The feeds of the sessions this instance's subscribers follow, one per session, shared by its
 * subscribers and dropped with the last of them. A feed follows its session ({@link SessionChanges#follow})
 * while it lives.
 */
final class SharedFeeds<F extends SharedFeeds.Feed> {

	/**
	 * A session's feed: it reads the session again when woken, one read at a time (wake-ups during a
	 * read make one more read after it), and ticks its subscribers when a read says so. Its
	 * subscriber count is guarded by the feed itself.
	 */
	abstract static class Feed {

		private static final Log logger = LogFactory.getLog(SharedFeeds.class);

		final Key key;

		/** Ticks after reads; a new subscriber gets the latest at once. */
		final Sinks.Many<Long> ticks = Sinks.many().replay().latest();

		int subscribers;

		boolean closed;

		/** Ends the feed's follow of its session. */
		AutoCloseable following = () -> {
		};

		private boolean reading;

		private boolean again;

		private long tick;

		Feed(Key key) {
			this.key = key;
			this.ticks.tryEmitNext(0L);
		}

		/** Reads the session on a store thread; answers whether the subscribers should look again. */
		abstract boolean read();

		/**
		 * The read failed: the subscribers, ticked after it, are told by the feed (each once, until a read
		 * succeeds). Without it a subscriber at the head, answered from what was read before, never heard
		 * of an outage, and a page said "live" while PostgreSQL was down.
		 */
		void readFailed(Throwable ex) {
		}

		void wake(Scheduler scheduler) {
			synchronized (this) {
				if (this.reading) {
					this.again = true;
					return;
				}
				this.reading = true;
			}
			Mono.fromCallable(this::read).subscribeOn(scheduler).subscribe((tell) -> done(tell, scheduler), (ex) -> {
				logger.debug("Could not read session '" + this.key.session() + "'; the next change or poll reads it again", ex);
				readFailed(ex);
				done(true, scheduler);
			});
		}

		/** Ticks the subscribers: a read outside {@link #wake} found a change. */
		void tell() {
			synchronized (this) {
				// under the lock, as in done: a sink drops a tick emitted at the same time as another
				this.ticks.tryEmitNext(++this.tick);
			}
		}

		private void done(boolean tell, Scheduler scheduler) {
			boolean more;
			synchronized (this) {
				more = this.again;
				this.again = false;
				this.reading = false;
				if (tell) {
					// under the lock: the next read may finish while this tick is going out, and a sink
					// drops a tick emitted at the same time as another (FAIL_NON_SERIALIZED)
					this.ticks.tryEmitNext(++this.tick);
				}
			}
			if (more) {
				wake(scheduler);
			}
		}

	}

	record Key(String contract, String session) {
	}

	private final Map<Key, F> feeds = new ConcurrentHashMap<>();

	private final Function<Key, F> create;

	SharedFeeds(Function<Key, F> create, SessionChanges changes) {
		this.create = (key) -> {
			F feed = create.apply(key);
			feed.following = changes.follow(key.contract(), key.session());
			return feed;
		};
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
		closeQuietly(feed.following);
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
