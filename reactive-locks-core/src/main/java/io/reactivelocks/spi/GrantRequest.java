package io.reactivelocks.spi;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

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
 * @param payload   the value to store with the grant (already checked: at most
 *                  {@link io.reactivelocks.LockOptions#MAX_PAYLOAD_BYTES} UTF-8 bytes, well-formed),
 *                  or {@code null} for none; a queueing store stores it with the queue entry
 */
public record GrantRequest(String name, String owner, Duration leaseTime, boolean queue, LockClock clock,
                           @Nullable String payload) {
    /** Checks the fields. */
    public GrantRequest {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(leaseTime, "leaseTime");
        Objects.requireNonNull(clock, "clock");
    }

    /**
     * A request without payload.
     *
     * @param name      the lock name
     * @param owner     the owner id
     * @param leaseTime the TTL to ask for
     * @param queue     whether a queueing store may enqueue
     * @param clock     the engine's clock
     */
    public GrantRequest(String name, String owner, Duration leaseTime, boolean queue, LockClock clock) {
        this(name, owner, leaseTime, queue, clock, null);
    }

    /**
     * A fresh owner id of the kind the engine puts in every request (128 random bits, 22 URL-safe
     * characters), for a store that makes a claim of its own and for code that drives a backend
     * directly. The first call seeds the generator (one read of the entropy device): make it on
     * the thread that creates the store, not on an event loop.
     *
     * @return a new random owner id
     */
    public static String newOwner() {
        return OwnerIds.next();
    }
}
