package io.reactivelocks.etcd;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts of the backend's queue wake-ups and session leases, for tests (one wake-up per
 * hand-over: no herd; a lost session is replaced): not used by the recipe itself.
 */
final class EtcdLockStats {

    private final AtomicLong predecessorWakeups = new AtomicLong();
    private final AtomicLong grantsOnDeletion = new AtomicLong();
    private final AtomicLong sessionsGranted = new AtomicLong();
    private final AtomicLong sessionsLost = new AtomicLong();

    void predecessorWokeUp() {
        predecessorWakeups.incrementAndGet();
    }

    void grantedOnDeletion() {
        grantsOnDeletion.incrementAndGet();
    }

    void sessionGranted() {
        sessionsGranted.incrementAndGet();
    }

    void sessionLost() {
        sessionsLost.incrementAndGet();
    }

    /** @return how many times a queued waiter was woken by its predecessor's deletion */
    long predecessorWakeups() {
        return predecessorWakeups.get();
    }

    /** @return how many waiters were granted on their predecessor's deletion alone, without a read */
    long grantsOnDeletion() {
        return grantsOnDeletion.get();
    }

    /** @return how many session leases were granted */
    long sessionsGranted() {
        return sessionsGranted.get();
    }

    /** @return how many sessions were lost (not closed) */
    long sessionsLost() {
        return sessionsLost.get();
    }
}
