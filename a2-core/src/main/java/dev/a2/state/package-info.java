/**
 * Reducer state: folding, snapshots and the in-memory cache. Internal to A2.
 */
@NullMarked
package dev.a2.state;

import org.jspecify.annotations.NullMarked;
