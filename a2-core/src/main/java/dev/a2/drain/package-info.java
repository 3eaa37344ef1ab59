/**
 * The drain engine, internal to A2: the claim loops that take a session's due units with a lease,
 * the runs that execute consumers on them, the finisher that writes how attempts ended, the leases
 * and aborts of running attempts, and {@code consume}. Applications use it through
 * {@link dev.a2.A2Server} and {@link dev.a2.Session}, never directly.
 */
@NullMarked
package dev.a2.drain;

import org.jspecify.annotations.NullMarked;
