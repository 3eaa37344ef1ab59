package dev.a2.live;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;

import dev.a2.PresencePatch;
import dev.a2.PresenceSnapshot;
import dev.a2.PresenceValue;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Presence for this instance's subscribers: a snapshot when they subscribe, then patches.
 * <p>
 * Subscribers of one session share a feed that reads the session's presence again when a presence
 * write is told (by any instance), and every check interval so that expiry shows. Each subscriber
 * keeps the last presence it was sent and is sent the difference to the latest: a slow subscriber
 * gets one patch list covering everything it missed, never a queue.
 */
public final class PresenceFeeds implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(PresenceFeeds.class);

	private final BiFunction<String, String, PresenceSnapshot> reader;

	private final Scheduler scheduler;

	private final Clock clock;

	private final SharedFeeds<Feed> feeds;

	private final AutoCloseable listening;

	private final Disposable checks;

	/**
	 * @param reader reads a session's presence (blocking; runs on the scheduler)
	 * @param check how often followed sessions are read again, for expiry and lost notifications
	 */
	public PresenceFeeds(SessionChanges changes, BiFunction<String, String, PresenceSnapshot> reader, Scheduler scheduler,
			Duration check, Clock clock) {
		this.reader = reader;
		this.scheduler = scheduler;
		this.clock = clock;
		this.feeds = new SharedFeeds<>(Feed::new, changes);
		this.listening = changes.listen(this::changed);
		this.checks = Flux.interval(check, check, scheduler).subscribe((tick) -> this.feeds.all().forEach(Feed::wake));
	}

	private void changed(@Nullable SessionChange change) {
		if (change == null) {
			this.feeds.all().forEach(Feed::wake);
		}
		else if (change.kind() == SessionChange.Kind.PRESENCE || change.kind() == SessionChange.Kind.CLEARED) {
			Feed feed = this.feeds.get(change.contract(), change.session());
			if (feed != null) {
				feed.wake();
			}
		}
	}

	/**
	 * A snapshot, then patches as presence changes; never completes, and never fails: a read that fails
	 * is tried again on the next change or check.
	 */
	public Flux<PresenceUpdate> presence(String contract, String session) {
		return Flux.defer(() -> {
			Feed feed = this.feeds.acquire(contract, session);
			PresenceSnapshot[] sent = { null };
			return feed.ticks.asFlux()
				.onBackpressureLatest()
				.concatMap((tick) -> Mono.fromCallable(() -> {
					PresenceSnapshot before = sent[0];
					// a newcomer's snapshot is read now: the feed's last read may hold fields expired since
					// (it reads again on a notice or a check), and a snapshot replaces what the client shows
					PresenceSnapshot now = (before == null) ? feed.readNow() : feed.current();
					sent[0] = now;
					if (before == null) {
						return new PresenceUpdate.Snapshot(now);
					}
					List<PresencePatch> patches = diff(before, now);
					return patches.isEmpty() ? null : (PresenceUpdate) new PresenceUpdate.Patches(patches);
				}).subscribeOn(this.scheduler).onErrorResume((ex) -> {
					// what was sent stays: the next tick (a write, a check) reads again. A failure ending the
					// feed would end every feed its consumer merges it with: all the sessions of a socket
					logger.debug("Could not read the presence of session '" + session + "'; the next change or "
							+ "check reads it again", ex);
					return Mono.empty();
				}), 1)
				.doFinally((signal) -> this.feeds.release(feed));
		});
	}

	private List<PresencePatch> diff(PresenceSnapshot before, PresenceSnapshot now) {
		List<PresencePatch> patches = new ArrayList<>();
		now.participants().forEach((participant, fields) -> {
			Map<String, PresenceValue> old = before.participants().getOrDefault(participant, Map.of());
			fields.forEach((field, value) -> {
				if (!Objects.equals(old.get(field), value)) {
					patches.add(new PresencePatch(participant, field, value.value(), value.at()));
				}
			});
		});
		before.participants().forEach((participant, fields) -> {
			Map<String, PresenceValue> current = now.participants().getOrDefault(participant, Map.of());
			fields.keySet().forEach((field) -> {
				if (!current.containsKey(field)) {
					patches.add(new PresencePatch(participant, field, null, this.clock.instant()));
				}
			});
		});
		return patches;
	}

	@Override
	public void close() {
		this.checks.dispose();
		SharedFeeds.closeQuietly(this.listening);
	}

	private final class Feed extends SharedFeeds.Feed {

		@Nullable PresenceSnapshot snapshot;

		/** Reads started, numbered: a read that started earlier never replaces one kept after it. */
		private long reads;

		private long keptRead;

		Feed(SharedFeeds.Key key) {
			super(key);
		}

		/** The latest presence read, reading it first when none was (on a store thread). */
		PresenceSnapshot current() {
			synchronized (this) {
				if (this.snapshot != null) {
					return this.snapshot;
				}
			}
			return readNow();
		}

		/**
		 * Reads the presence now (on a store thread), for a newcomer's snapshot. When that read finds a
		 * change, the other subscribers are ticked: the change's notice may have arrived before, and the
		 * feed's reads after it would find nothing new to tell them.
		 */
		PresenceSnapshot readNow() {
			long number = start();
			PresenceSnapshot read = PresenceFeeds.this.reader.apply(this.key.contract(), this.key.session());
			if (keep(read, number)) {
				tell();
			}
			return read;
		}

		private synchronized long start() {
			return ++this.reads;
		}

		/** Keeps a read as the latest unless a later one was kept; answers whether what is kept changed. */
		private synchronized boolean keep(PresenceSnapshot read, long number) {
			if (number < this.keptRead) {
				return false;
			}
			boolean changed = !read.equals(this.snapshot);
			this.snapshot = read;
			this.keptRead = number;
			return changed;
		}

		void wake() {
			wake(PresenceFeeds.this.scheduler);
		}

		/** Reads the presence again; the subscribers look again only when it changed. */
		@Override
		boolean read() {
			long number = start();
			return keep(PresenceFeeds.this.reader.apply(this.key.contract(), this.key.session()), number);
		}

	}

}
