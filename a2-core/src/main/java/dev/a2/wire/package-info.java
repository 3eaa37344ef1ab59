/**
 * The wire format of A2's HTTP and WebSocket endpoints: how events, state, presence, errors and
 * socket frames are written as JSON, and how request bodies and frames are read, within limits.
 */
@NullMarked
package dev.a2.wire;

import org.jspecify.annotations.NullMarked;
