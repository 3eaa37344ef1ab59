package dev.a2.live;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import dev.a2.store.EventStore;
import dev.a2.store.SessionHead;
import dev.a2.store.StoredEvent;
import dev.a2.store.StoredPage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The live events of sessions for this instance's subscribers: history first, then what is
 * appended, in index order, without gaps or repeats, from any instance.
 * <p>
 * Subscribers of one session share a feed. A change of the session (told by {@link SessionChanges})
 * makes the feed read the new rows from the store once, into a small window of recent events, and
 * wakes its subscribers; each takes what follows its own position from the window, or from the store
 * when it fell behind the window. A subscriber never holds more than one chunk that its consumer has
 * not taken: wake-ups coalesce, and a slow subscriber is served from the store when it reads again.
 * When changes of other instances may not arrive (the listener is down), feeds poll.
 */
public final class SessionFeeds implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(SessionFeeds.class);

	/** The most events one chunk carries. */
	public static final int CHUNK = 500;

	/** The most payload characters one chunk carries (but always at least one event), so frames stay small. */
	public static final int CHUNK_CHARS = 128 * 1024;

	private static final int WINDOW_EVENTS = 512;

	private static final long WINDOW_BYTES = 1 << 20;

	private final EventStore store;

	private final Scheduler scheduler;

	private final SharedFeeds<Feed> feeds;

	private final AtomicLong buffered = new AtomicLong();

	private final AutoCloseable listening;

	private final Disposable poll;

	/**
	 * @param store where events are read
	 * @param changes what tells the feeds that a session changed
	 * @param scheduler where store reads run (they block): never an event loop
	 * @param poll how often feeds read again while changes of other instances may not arrive; and, at
	 * ten times that, always, for a change whose notification was lost with the instance that made it
	 */
	public SessionFeeds(EventStore store, SessionChanges changes, Scheduler scheduler, Duration poll) {
		this.store = store;
		this.scheduler = scheduler;
		this.feeds = new SharedFeeds<>(Feed::new, changes);
		this.listening = changes.listen(this::changed);
		long[] ticks = { 0 };
		this.poll = Flux.interval(poll, poll, scheduler).subscribe((tick) -> {
			if (!changes.connected() || ++ticks[0] % 10 == 0) {
				this.feeds.all().forEach(Feed::wake);
			}
		});
	}

	private void changed(@Nullable SessionChange change) {
		if (change == null) {
			this.feeds.all().forEach(Feed::wake);
			return;
		}
		if (change.kind() == SessionChange.Kind.PRESENCE) {
			return;
		}
		Feed feed = this.feeds.get(change.contract(), change.session());
		if (feed != null) {
			feed.wake();
		}
	}

	/**
	 * Every event of the session after {@code after} (past a later clear, a {@link FeedItem.Cleared}
	 * first), then each new one as it is appended; never completes, and never fails: a read of the store
	 * that fails is a {@link FeedItem.Failed}, and the feed goes on from where it was. Store reads run on
	 * the scheduler.
	 */
	public Flux<FeedItem> events(String contract, String session, long after) {
		return Flux.defer(() -> {
			Feed feed = this.feeds.acquire(contract, session);
			Subscriber subscriber = new Subscriber(feed, after);
			return feed.ticks.asFlux()
				.onBackpressureLatest()
				.concatMap((tick) -> subscriber.drain(), 1)
				.doFinally((signal) -> {
					subscriber.cancelled();
					this.feeds.release(feed);
				});
		});
	}

	/** Events chunked for subscribers that their consumers have not taken yet, across all subscribers. */
	public long bufferedEvents() {
		return this.buffered.get();
	}

	/** How many sessions have subscribers on this instance. */
	public int sessions() {
		return this.feeds.size();
	}

	@Override
	public void close() {
		this.poll.dispose();
		SharedFeeds.closeQuietly(this.listening);
	}

	private static List<StoredEvent> withinChunk(List<StoredEvent> events) {
		long chars = 0;
		for (int i = 0; i < events.size(); i++) {
			chars += events.get(i).payload().length();
			if (i > 0 && chars > CHUNK_CHARS) {
				return events.subList(0, i);
			}
		}
		return events;
	}

	/** One session's window of recent events, shared by its subscribers on this instance. */
	private final class Feed extends SharedFeeds.Feed {

		final ArrayDeque<StoredEvent> window = new ArrayDeque<>();

		long windowBytes;

		/** The window holds the events after the latest clear up to here (0: nothing read yet). */
		long readThrough = -1;

		long clearedAt;

		Feed(SharedFeeds.Key key) {
			super(key);
		}

		void wake() {
			wake(SessionFeeds.this.scheduler);
		}

		/** Why the last read of the session failed, until one succeeds. */
		@Nullable Throwable failure;

		@Override
		synchronized void readFailed(Throwable ex) {
			this.failure = ex;
		}

		/** Reads the new rows into the window; the subscribers always look again after. */
		@Override
		boolean read() {
			if (this.readThrough < 0) {
				// the window starts at the head: subscribers further back read the store
				SessionHead head = SessionFeeds.this.store.head(this.key.contract(), this.key.session());
				synchronized (this) {
					this.readThrough = head.lastIndex();
					this.clearedAt = head.clearedAt();
				}
			}
			while (true) {
				StoredPage page = SessionFeeds.this.store.history(this.key.contract(), this.key.session(),
						this.readThrough, CHUNK);
				boolean full;
				synchronized (this) {
					if (page.clearedAt() > this.clearedAt) {
						this.clearedAt = page.clearedAt();
						this.window.clear();
						this.windowBytes = 0;
					}
					for (StoredEvent event : page.events()) {
						this.window.addLast(event);
						this.windowBytes += event.payload().length();
					}
					while (this.window.size() > WINDOW_EVENTS || this.windowBytes > WINDOW_BYTES && this.window.size() > 1) {
						this.windowBytes -= this.window.removeFirst().payload().length();
					}
					this.readThrough = Math.max(Math.max(this.readThrough, this.clearedAt),
							page.events().isEmpty() ? page.head() : page.events().get(page.events().size() - 1).index());
					full = page.events().size() == CHUNK;
				}
				if (!full) {
					synchronized (this) {
						this.failure = null;
					}
					return true;
				}
			}
		}

		/**
		 * What follows {@code position} from the window, or {@code null} when the window does not reach
		 * back that far (read the store) — an empty list when there is nothing new. Throws while the
		 * session's last read failed.
		 */
		synchronized @Nullable List<FeedItem> after(long position) {
			if (this.failure != null) {
				// the subscriber's drain tells its consumer once (a FeedItem.Failed), and reads on at the next tick
				throw (this.failure instanceof RuntimeException failed) ? failed
						: new IllegalStateException("the session's last read failed", this.failure);
			}
			if (this.readThrough < 0) {
				return null;
			}
			List<FeedItem> items = new ArrayList<>(2);
			long from = position;
			if (from < this.clearedAt) {
				items.add(new FeedItem.Cleared(this.clearedAt));
				from = this.clearedAt;
			}
			if (from >= this.readThrough) {
				return items;
			}
			StoredEvent first = this.window.peekFirst();
			if (first == null || first.index() > from + 1) {
				return null;
			}
			List<StoredEvent> events = new ArrayList<>();
			long chars = 0;
			for (StoredEvent event : this.window) {
				if (event.index() > from) {
					chars += event.payload().length();
					if (!events.isEmpty() && chars > CHUNK_CHARS) {
						break;
					}
					events.add(event);
					if (events.size() == CHUNK) {
						break;
					}
				}
			}
			if (!events.isEmpty()) {
				items.add(new FeedItem.Events(events));
			}
			return items;
		}

	}

	/** One subscriber's position in a feed. */
	private final class Subscriber {

		private final Feed feed;

		private long position;

		private boolean more;

		/** Events handed on and not yet taken by the consumer. */
		private final AtomicLong held = new AtomicLong();

		/** Whether the last read failed, and the consumer was told. */
		private boolean failing;

		Subscriber(Feed feed, long after) {
			this.feed = feed;
			this.position = after;
		}

		/** Everything that follows the position now, chunk by chunk as the consumer asks. */
		Flux<FeedItem> drain() {
			return Mono.fromCallable(this::next)
				.subscribeOn(SessionFeeds.this.scheduler)
				.repeat(() -> this.more)
				.flatMapIterable((items) -> items, 1)
				.doOnNext((item) -> {
					if (item instanceof FeedItem.Events events) {
						SessionFeeds.this.buffered.addAndGet(-events.events().size());
						this.held.addAndGet(-events.events().size());
					}
				})
				.onErrorResume(this::failed);
		}

		/**
		 * A read that failed: the position stays, and the next tick (a change, a poll) reads again. A
		 * failure ending the feed would end every feed its consumer merges it with: all the sessions of a
		 * socket, for a fault of one.
		 */
		private Flux<FeedItem> failed(Throwable ex) {
			if (this.failing) {
				logger.debug("Could not read session '" + this.feed.key.session() + "' again; the next change or poll "
						+ "reads it again", ex);
				return Flux.empty();
			}
			this.failing = true;
			return Flux.just(new FeedItem.Failed(ex));
		}

		private List<FeedItem> next() {
			List<FeedItem> items = this.feed.after(this.position);
			if (items == null) {
				StoredPage page = SessionFeeds.this.store.history(this.feed.key.contract(), this.feed.key.session(),
						this.position, CHUNK);
				items = new ArrayList<>(2);
				if (page.clearedAt() > this.position) {
					items.add(new FeedItem.Cleared(page.clearedAt()));
				}
				List<StoredEvent> events = withinChunk(page.events());
				if (!events.isEmpty()) {
					items.add(new FeedItem.Events(events));
				}
			}
			this.failing = false;
			// drain until a call finds nothing new: then this subscriber has caught up with the feed
			this.more = !items.isEmpty();
			for (FeedItem item : items) {
				if (item instanceof FeedItem.Cleared cleared) {
					this.position = cleared.index();
				}
				else if (item instanceof FeedItem.Events events) {
					this.position = events.lastIndex();
					SessionFeeds.this.buffered.addAndGet(events.events().size());
					this.held.addAndGet(events.events().size());
				}
			}
			return items;
		}

		void cancelled() {
			SessionFeeds.this.buffered.addAndGet(-this.held.getAndSet(0));
		}

	}

}
