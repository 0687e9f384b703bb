package io.reactivelocks.election;

import io.reactivelocks.Lease;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * This process leads an election: one element of {@link LeaderElection#campaign}. A later
 * element of the same campaign is the same term (same token) with a later deadline.
 *
 * @param name  the election name
 * @param lease the lease behind the leadership: {@link Lease#token()} fences what the leader
 *              writes, {@link Lease#remaining()} bounds how long it may still act
 */
public record Leadership(String name, Lease lease) {
    /** Checks the fields. */
    public Leadership {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(lease, "lease");
    }

    /** @return the value observers see now: the campaign's value or the last completed {@link #proclaim} */
    public String value() {
        return Objects.requireNonNullElse(lease.payload(), "");
    }

    /** @return the fencing token of this term: larger than every earlier leader's */
    public long token() {
        return lease.token();
    }

    /** @return the owner id of this term's lease ({@link Leader#owner()} for observers) */
    public String owner() {
        return lease.owner();
    }

    /** @return {@code true} while this term lasts (not resigned, not lost, deadline not passed) */
    public boolean isValid() {
        return lease.isValid();
    }

    /**
     * Publishes a new value while leading (the lock payload, owner- and token-checked);
     * observers see the same leader with the new value.
     *
     * @param value the new value: at most {@link io.reactivelocks.LockOptions#MAX_PAYLOAD_BYTES}
     *              UTF-8 bytes; not null
     * @return a {@code Mono} that writes on subscribe; errors with {@link LockLostException}
     *         when this term is over
     * @throws NullPointerException     naming {@code value} when it is null
     * @throws IllegalArgumentException naming {@code value} when it is too long or malformed
     */
    public Mono<Void> proclaim(String value) {
        return lease.updatePayload(LockOptions.checkPayload(value, "value"));
    }

    /**
     * Gives leadership up: releases the lease, so that the next candidate is elected; the
     * campaign stream completes. Idempotent.
     *
     * @return a {@code Mono} that resigns on subscribe and completes when the store confirmed
     */
    public Mono<Void> resign() {
        return lease.release();
    }

    /** @return a {@code Mono} that completes when this term is lost (not when resigned) */
    public Mono<Void> lost() {
        return lease.lost();
    }
}
