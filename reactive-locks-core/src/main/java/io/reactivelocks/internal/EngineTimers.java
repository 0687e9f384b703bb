package io.reactivelocks.internal;

import io.reactivelocks.LockClock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.scheduler.Scheduler;

/**
 * An engine's timing structures, one of each per scheduler (and clock) its calls use: request deadlines
 * ({@link RequestDeadlines}), lease deadlines ({@link DeadlineHeap}) and batched renewals ({@link RenewalScheduler}).
 * The ones of the engine's own scheduler and default clock — nearly every call's — are fields, not map look-ups.
 * Both engines keep theirs here, so request timeouts, deadlines and renewal batching are the same rules everywhere.
 */
final class EngineTimers {

    private final Scheduler ownScheduler;
    private final LockClock ownClock;
    private final RenewalScheduler.Renewer renewer;
    private final String storeName;
    private final RequestDeadlines ownDeadlines;
    private final DeadlineHeap ownLeaseDeadlines;
    private final RenewalScheduler ownRenewals;
    private final Map<Object, RequestDeadlines> deadlines = new ConcurrentHashMap<>();
    private final Map<Object, DeadlineHeap> leaseDeadlines = new ConcurrentHashMap<>();
    private final Map<Object, RenewalScheduler> renewals = new ConcurrentHashMap<>();

    /**
     * @param ownScheduler the engine's own scheduler
     * @param ownClock     the clock of its default options
     * @param renewer      the store's batch renewal
     * @param storeName    the store's name, for errors
     */
    EngineTimers(Scheduler ownScheduler, LockClock ownClock, RenewalScheduler.Renewer renewer, String storeName) {
        this.ownScheduler = ownScheduler;
        this.ownClock = ownClock;
        this.renewer = renewer;
        this.storeName = storeName;
        this.ownDeadlines = new RequestDeadlines(ownScheduler, ownClock);
        this.ownLeaseDeadlines = new DeadlineHeap(ownScheduler, ownClock);
        this.ownRenewals = new RenewalScheduler(renewer, storeName, ownScheduler, ownClock, ownDeadlines);
    }

    /** @return the request timeouts of requests timed on {@code scheduler} with {@code clock} */
    RequestDeadlines deadlines(Scheduler scheduler, LockClock clock) {
        if (scheduler == ownScheduler && clock == ownClock) {
            return ownDeadlines;
        }
        return deadlines.computeIfAbsent(key(scheduler, clock), k -> new RequestDeadlines(scheduler, clock));
    }

    /** @return the deadlines of leases timed on {@code scheduler} with {@code clock} */
    DeadlineHeap leaseDeadlines(Scheduler scheduler, LockClock clock) {
        if (scheduler == ownScheduler && clock == ownClock) {
            return ownLeaseDeadlines;
        }
        return leaseDeadlines.computeIfAbsent(key(scheduler, clock), k -> new DeadlineHeap(scheduler, clock));
    }

    /** @return the renewal batches of leases renewed on {@code scheduler} with {@code clock} */
    RenewalScheduler renewals(Scheduler scheduler, LockClock clock) {
        if (scheduler == ownScheduler && clock == ownClock) {
            return ownRenewals;
        }
        RenewalScheduler r = renewals.get(key(scheduler, clock));
        if (r == null) { // no capturing lambda per lease once the scheduler has one
            r = renewals.computeIfAbsent(key(scheduler, clock),
                    k -> new RenewalScheduler(renewer, storeName, scheduler, clock, deadlines(scheduler, clock)));
        }
        return r;
    }

    /** The key of a scheduler: itself with the default clock, else the pair. */
    private Object key(Scheduler scheduler, LockClock clock) {
        return clock == ownClock ? scheduler : new ClockedScheduler(scheduler, clock);
    }

    /** The key of a scheduler used with a clock other than the engine's default one. */
    private record ClockedScheduler(Scheduler scheduler, LockClock clock) {
    }

    /** Cancels every timer: no timer outlives the engine. */
    void close() {
        ownRenewals.close();
        ownDeadlines.close();
        ownLeaseDeadlines.close();
        renewals.values().forEach(RenewalScheduler::close);
        deadlines.values().forEach(RequestDeadlines::close);
        leaseDeadlines.values().forEach(DeadlineHeap::close);
    }
}
