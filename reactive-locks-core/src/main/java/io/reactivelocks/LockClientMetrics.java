package io.reactivelocks;

import java.util.List;

/**
 * A live view of one {@link LockClient}: the leases it holds and the acquires it is working on,
 * read at the moment of each call. For metrics, health checks and tests; reading it changes
 * nothing and never blocks.
 */
public interface LockClientMetrics {

    /**
     * @return snapshots of the leases the client holds now — name, owner, token and
     *         {@link Lease#remaining()} as of the last confirmed renewal — in no particular order
     */
    List<Lease> heldLeases();

    /** @return how many leases the client holds now */
    int heldLeaseCount();

    /**
     * @return the lock names of the acquires in progress (waiting for the lock, or a request or the
     *         clean-up of a cancelled one still under way), one entry per acquire, in no particular order
     */
    List<String> pendingAcquires();

    /** @return how many acquires are in progress */
    int pendingAcquireCount();

    /**
     * @return how many releases after a scoped body ({@code withLock}) the store did not confirm
     *         since the client was created (the body's result was passed on; each lease expired by itself)
     */
    long unconfirmedReleaseCount();
}
