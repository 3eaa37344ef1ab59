/**
 * The annotation model of A2 for Spring applications.
 */
@NullMarked
package dev.a2.spring;

import org.jspecify.annotations.NullMarked;
