package dev.a2.ai;

/**
 * How a run's reply ended.
 *
 * @param ending which end event the reply has
 * @param text the reply's text (of the attempt that wrote it)
 */
public record ReplyOutcome(Ending ending, String text) {

	/** The end events of a reply. */
	public enum Ending {

		/** {@code reply.completed}. */
		COMPLETED,
		/** {@code reply.stopped}: the run was aborted by an {@code abortOn} event. */
		STOPPED,
		/** {@code reply.failed}. */
		FAILED,
		/** {@code tool.approval.requested}: the conversation continues when a person answers. */
		APPROVAL_REQUESTED,
		/** Nothing to answer (e.g. an approval of a call that was answered already). */
		NONE

	}

}
