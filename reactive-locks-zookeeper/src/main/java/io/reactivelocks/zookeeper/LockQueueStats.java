package io.reactivelocks.zookeeper;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts of the queue's waits, for tests that check a hand-over wakes one waiter only (no herd):
 * not used by the recipe itself.
 */
final class LockQueueStats {

    private final AtomicLong predecessorWatches = new AtomicLong();
    private final AtomicLong predecessorWatchEvents = new AtomicLong();
    private final AtomicLong queueChecks = new AtomicLong();
    private final AtomicLong grantsOnDeletion = new AtomicLong();

    void predecessorWatchSet() {
        predecessorWatches.incrementAndGet();
    }

    void predecessorWatchFired() {
        predecessorWatchEvents.incrementAndGet();
    }

    void queueChecked() {
        queueChecks.incrementAndGet();
    }

    void grantedOnDeletion() {
        grantsOnDeletion.incrementAndGet();
    }

    /** @return how many predecessor watches were set (on a predecessor that still existed) */
    long predecessorWatches() {
        return predecessorWatches.get();
    }

    /** @return how many predecessor watches fired (one per hand-over in a queue: no herd) */
    long predecessorWatchEvents() {
        return predecessorWatchEvents.get();
    }

    /** @return how many times a queued owner looked at the children again after its wait */
    long queueChecks() {
        return queueChecks.get();
    }

    /** @return how many queued owners were granted on their predecessor's deletion, without listing the children again */
    long grantsOnDeletion() {
        return grantsOnDeletion.get();
    }
}
