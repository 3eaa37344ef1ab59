/**
 * The store SPI: what A2 needs from a database.
 */
@NullMarked
package dev.a2.store;

import org.jspecify.annotations.NullMarked;
