package io.reactivelocks.spi;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.Objects;

/**
 * One attempt to take a lock.
 *
 * @param name      the lock name (already validated: non-empty, at most 1024 UTF-8 bytes)
 * @param owner     the owner id to record; random and unique per acquire
 * @param leaseTime the TTL to ask for
 * @param queue     {@code true} when the caller will wait: a queueing store may enqueue and
 *                  answer {@link Attempt.Queued}; {@code false} (tryAcquire) must not leave a
 *                  queue entry behind
 * @param clock     the engine's clock, for backends that time-stamp a later grant themselves
 */
public record GrantRequest(String name, String owner, Duration leaseTime, boolean queue, LockClock clock) {
    /** Checks the fields. */
    public GrantRequest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(clock, "clock");
    }
}
