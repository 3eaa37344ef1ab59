package dev.a2;

import java.util.List;

/**
 * What the drainer of this instance is doing at one moment.
 *
 * @param draining sessions whose claim loop is queued or running
 * @param running attempts whose consumer code runs now
 * @param finishing attempts that ended and whose finish is not written yet
 */
public record DrainActivity(int draining, List<RunningAttempt> running, int finishing) {

	/** Nothing is being claimed, run or finished on this instance. */
	public static final DrainActivity IDLE = new DrainActivity(0, List.of(), 0);

	public DrainActivity {
		running = List.copyOf(running);
	}

	/** Whether nothing is being claimed, run or finished on this instance. */
	public boolean idle() {
		return this.draining == 0 && this.running.isEmpty() && this.finishing == 0;
	}

	/**
	 * An attempt running on this instance.
	 *
	 * @param index the index of the event it runs (a cursor's current event)
	 */
	public record RunningAttempt(String contract, String session, String consumer, long index, int attempt) {

		@Override
		public String toString() {
			return this.consumer + " on " + this.contract + "/" + this.session + " #" + this.index + " (attempt "
					+ this.attempt + ")";
		}

	}

}
