/**
 * Spring Boot auto-configuration of A2.
 */
@NullMarked
package dev.a2.autoconfigure;

import org.jspecify.annotations.NullMarked;
