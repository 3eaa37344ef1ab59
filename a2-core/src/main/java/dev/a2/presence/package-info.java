/**
 * Presence internals: the rules a presence write must follow before it is stored.
 */
@NullMarked
package dev.a2.presence;

import org.jspecify.annotations.NullMarked;
