package dev.a2;

/**
 * What an operator does with a dead letter.
 */
public enum RedriveAction {

	/** Run it again, with a fresh failure count. */
	RETRY,

	/** Mark it done without running it; its lane moves on. */
	SKIP

}
