package dev.a2.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Every run of a consumer's code since the test started, in the order they started.
 */
public final class RunJournal {

	private final List<Entry> entries = new ArrayList<>();

	/** Every run, in the order they started. */
	public synchronized List<RunRecord> runs() {
		return this.entries.stream().map(Entry::record).toList();
	}

	/**
	 * The runs of one consumer, in the order they started: {@code "contract/name"}, or a name alone for
	 * the consumers of that name in every contract.
	 */
	public List<RunRecord> runs(String consumer) {
		return runs().stream().filter((run) -> ConsumerName.matches(consumer, run.contract(), run.consumer())).toList();
	}

	/** The back-offs the failures of one consumer ({@link #runs(String) named as there}) waited, in order. */
	public List<Duration> backOffs(String consumer) {
		return runs(consumer).stream().map(RunRecord::backOff).filter((backOff) -> backOff != null).toList();
	}

	/** How many runs started. */
	synchronized int size() {
		return this.entries.size();
	}

	synchronized Entry start(RunRecord running) {
		Entry entry = new Entry(running);
		this.entries.add(entry);
		return entry;
	}

	synchronized void clear() {
		this.entries.clear();
	}

	@Override
	public String toString() {
		StringBuilder text = new StringBuilder();
		for (RunRecord run : runs()) {
			text.append("\n  ").append(run);
		}
		return text.isEmpty() ? "no runs" : text.substring(1);
	}

	/** A run's record, updated as it ends (and, when it is superseded, after that). */
	static final class Entry {

		private volatile RunRecord record;

		Entry(RunRecord record) {
			this.record = record;
		}

		RunRecord record() {
			return this.record;
		}

		synchronized void end(RunOutcome outcome, @Nullable Duration backOff, @Nullable String error) {
			RunRecord r = this.record;
			this.record = new RunRecord(r.contract(), r.consumer(), r.session(), r.index(), r.attempt(), r.at(), outcome,
					backOff, error, r.stalled());
		}

		synchronized void stalled() {
			RunRecord r = this.record;
			this.record = new RunRecord(r.contract(), r.consumer(), r.session(), r.index(), r.attempt(), r.at(), r.outcome(),
					r.backOff(), r.error(), true);
		}

	}

}
