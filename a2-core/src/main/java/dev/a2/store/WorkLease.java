package dev.a2.store;

import java.time.Instant;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A unit leased by the instance that appends its event, in the append's own statement: the unit is
 * stored as claimed (its first attempt, this token, this lease), and that instance starts the run
 * once the append commits, with no claim in between. Fencing is the claim's: only this token
 * finishes the attempt, and a lease that lapses is taken over like any other.
 *
 * @param token the claim token of the first attempt
 * @param until when the lease lapses unless renewed
 * @param owner the instance's liveness identity, as a claim records it
 */
public record WorkLease(UUID token, Instant until, @Nullable Integer owner) {
}
