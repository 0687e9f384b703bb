package io.reactivelocks.internal;

import io.reactivelocks.LockClock;
import io.reactivelocks.LockException;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.RenewRequest;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * An engine's timing structures, one of each per scheduler (and clock) its calls use: request deadlines
 * ({@link RequestDeadlines}), lease deadlines ({@link DeadlineHeap}) and batched renewals ({@link RenewalScheduler}).
 * The ones of the engine's own scheduler and default clock — nearly every call's — are fields, not map look-ups.
 * Every engine keeps theirs here — the mutex engine, the grant engine and the task queue, whose claims
 * renew in batches of their own ({@link #renewals(RenewalScheduler.Renewer, int, Function)}) — so request
 * timeouts, deadlines and renewal batching are the same rules everywhere, and {@link #close()} leaves no
 * timer behind. Not API.
 */
public final class EngineTimers {

    private final Scheduler ownScheduler;
    private final LockClock ownClock;
    /** The store's renewal of leases and its error mapping; none for the task queue. */
    private final RenewalScheduler.@Nullable Renewer<RenewRequest> renewer;
    private final @Nullable Function<Throwable, LockException> renewalErrors;
    private final RequestDeadlines ownDeadlines;
    private final DeadlineHeap ownLeaseDeadlines;
    private final @Nullable RenewalScheduler<RenewRequest> ownRenewals;
    private final Map<Object, RequestDeadlines> deadlines = new ConcurrentHashMap<>();
    private final Map<Object, DeadlineHeap> leaseDeadlines = new ConcurrentHashMap<>();
    private final Map<Object, RenewalScheduler<RenewRequest>> renewals = new ConcurrentHashMap<>();
    /** The renewal batches made by {@link #renewals(RenewalScheduler.Renewer, int, Function)}. */
    private final Queue<RenewalScheduler<?>> otherRenewals = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /**
     * @param ownScheduler the engine's own scheduler
     * @param ownClock     the clock of its default options
     * @param renewer      the store's batch renewal of leases
     * @param storeName    the store's name, for errors
     */
    EngineTimers(Scheduler ownScheduler, LockClock ownClock, RenewalScheduler.Renewer<RenewRequest> renewer,
                 String storeName) {
        this.ownScheduler = ownScheduler;
        this.ownClock = ownClock;
        this.renewer = renewer;
        Function<Throwable, LockException> errors = e -> BackendErrors.map(storeName, null, "renewal", e);
        this.renewalErrors = errors;
        this.ownDeadlines = new RequestDeadlines(ownScheduler, ownClock);
        this.ownLeaseDeadlines = new DeadlineHeap(ownScheduler, ownClock);
        this.ownRenewals = new RenewalScheduler<>(renewer, errors, Integer.MAX_VALUE, ownScheduler, ownClock,
                ownDeadlines);
    }

    /**
     * The timers of an engine whose grants renew through renewers of their own (the task queue's
     * claims, one per queue and claim time): {@link #renewals(RenewalScheduler.Renewer, int, Function)}.
     *
     * @param ownScheduler the engine's scheduler
     * @param ownClock     its clock
     */
    public EngineTimers(Scheduler ownScheduler, LockClock ownClock) {
        this.ownScheduler = Objects.requireNonNull(ownScheduler, "ownScheduler");
        this.ownClock = Objects.requireNonNull(ownClock, "ownClock");
        this.renewer = null;
        this.renewalErrors = null;
        this.ownDeadlines = new RequestDeadlines(ownScheduler, ownClock);
        this.ownLeaseDeadlines = new DeadlineHeap(ownScheduler, ownClock);
        this.ownRenewals = null;
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

    /** @return the deadlines of grants timed on the own scheduler with the own clock */
    DeadlineHeap ownLeaseDeadlines() {
        return ownLeaseDeadlines;
    }

    /** @return the renewal batches of leases renewed on {@code scheduler} with {@code clock} */
    RenewalScheduler<RenewRequest> renewals(Scheduler scheduler, LockClock clock) {
        RenewalScheduler<RenewRequest> own = ownRenewals;
        if (scheduler == ownScheduler && clock == ownClock && own != null) {
            return own;
        }
        RenewalScheduler<RenewRequest> r = renewals.get(key(scheduler, clock));
        if (r == null) { // no capturing lambda per lease once the scheduler has one
            RenewalScheduler.Renewer<RenewRequest> leases = Objects.requireNonNull(renewer, "these timers renew no leases");
            Function<Throwable, LockException> errors = Objects.requireNonNull(renewalErrors, "renewalErrors");
            r = renewals.computeIfAbsent(key(scheduler, clock), k -> new RenewalScheduler<>(leases, errors,
                    Integer.MAX_VALUE, scheduler, clock, deadlines(scheduler, clock)));
        }
        return r;
    }

    /**
     * New renewal batches on the own scheduler and clock, for members renewed by {@code renewer}
     * (its members' deadlines are watched by these timers too: {@link RenewalScheduler.Member}),
     * closed with these timers; made after {@link #close()}, they schedule nothing.
     *
     * @param renewer  the store's renewal of a batch
     * @param maxBatch the most members one call may carry; larger batches are split
     * @param errors   maps what a call failed with
     * @param <Q>      what the store renews one member by
     * @return the batches
     */
    public <Q> RenewalScheduler<Q> renewals(RenewalScheduler.Renewer<Q> renewer, int maxBatch,
                                            Function<Throwable, LockException> errors) {
        RenewalScheduler<Q> r = new RenewalScheduler<>(renewer, errors, maxBatch, ownScheduler, ownClock, ownDeadlines);
        otherRenewals.add(r);
        if (closed) {
            r.close();
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
    public void close() {
        closed = true;
        if (ownRenewals != null) {
            ownRenewals.close();
        }
        ownDeadlines.close();
        ownLeaseDeadlines.close();
        renewals.values().forEach(RenewalScheduler::close);
        otherRenewals.forEach(RenewalScheduler::close);
        deadlines.values().forEach(RequestDeadlines::close);
        leaseDeadlines.values().forEach(DeadlineHeap::close);
    }
}
