/**
 * A model's reply streamed into an A2 session (coalesced, attempt-safe, stoppable, with tool calls
 * and approvals), and Spring AI chat memory on the session's log.
 */
@NullMarked
package dev.a2.ai;

import org.jspecify.annotations.NullMarked;
