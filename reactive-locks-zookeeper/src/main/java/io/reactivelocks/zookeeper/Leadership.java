package io.reactivelocks.zookeeper;

import io.reactivelocks.Lease;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * This process leads an election: one element of {@link ZooKeeperLeaderElection#campaign}.
 *
 * @param election the election name
 * @param value    the value this process campaigned with, now visible to every observer
 * @param lease    the lease behind the leadership: {@link Lease#token()} fences what the leader
 *                 writes, {@link Lease#validUntilNanos()} bounds how long it may still act
 */
public record Leadership(String election, String value, Lease lease) {
    /** Checks the fields. */
    public Leadership {
        Objects.requireNonNull(election, "election");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(lease, "lease");
    }

    /** @return the fencing token of this term */
    public long token() {
        return lease.token();
    }

    /**
     * Gives leadership up: deletes this process's node, so the next candidate (its watcher) is
     * elected. The campaign stream completes. Idempotent.
     *
     * @return completes when ZooKeeper confirmed
     */
    public Mono<Void> resign() {
        return lease.release();
    }
}
