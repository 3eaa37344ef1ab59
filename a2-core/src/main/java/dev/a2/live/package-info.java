/**
 * Live delivery: which sessions changed (on this instance and, through PostgreSQL, on every other),
 * and the per-session feeds that serve streams from the store without buffering without bound.
 */
@NullMarked
package dev.a2.live;

import org.jspecify.annotations.NullMarked;
