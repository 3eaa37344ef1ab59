/**
 * The PostgreSQL store on Spring JDBC, and its schema migrations.
 */
@NullMarked
package dev.a2.store.postgres;

import org.jspecify.annotations.NullMarked;
