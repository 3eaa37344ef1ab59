/**
 * The API of A2: contracts, sessions and their events, state and errors.
 */
@NullMarked
package dev.a2;

import org.jspecify.annotations.NullMarked;
