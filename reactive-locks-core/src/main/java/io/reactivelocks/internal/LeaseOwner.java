package io.reactivelocks.internal;

import io.reactivelocks.LockClock;
import io.reactivelocks.LockException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.Renewal;
import io.reactivelocks.spi.RenewalMode;
import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.ContextView;

/**
 * The engine a {@link LeaseHandle} belongs to: the mutex engine ({@link DefaultLockClient}: lock and fair lock) or
 * the grant engine ({@link GrantEngine}: semaphore permits, read and write grants). A held lease of every concept is
 * one {@code LeaseHandle} — one deadline heap, one batched renewal, one loss and release path — and asks its engine
 * only for what differs: the store's calls, its events and the registries it is counted in.
 */
abstract class LeaseOwner {

    /** @return the lease deadlines timed on {@code scheduler} with {@code clock} */
    abstract DeadlineHeap leaseDeadlines(Scheduler scheduler, LockClock clock);

    /** @return how the store keeps a grant alive: renewed per lease, or by a session of the store */
    abstract RenewalMode renewalMode();

    /** @return the session's confirmations of {@code lock}, for a session store ({@link RenewalMode#SESSION}) */
    abstract Flux<Renewal> sessionRenewals(HeldLock lock, LockClock clock);

    /** @return the log of the store's outages as this engine sees them */
    abstract StoreOutage outage();

    /** @return the store's events of {@code name} (a lease's revocation listens to them) */
    abstract Flux<LockEvent> events(String name);

    /** The lease ended (lost or released): out of the engine's registry. */
    abstract void forget(LeaseHandle lease);

    /** @return the owner-checked release of a lost lease, nobody waiting for it but the engine's close */
    abstract Mono<Void> releaseDetached(String name, String owner, LockOptions options);

    /** @return the owner- and token-checked payload update on the store: whether the store still had the grant */
    abstract Mono<Boolean> updatePayloadOnServer(HeldLock lock, @Nullable String payload, LockOptions options);

    /** @return the owner-checked release on the store that the engine's close waits for, bounded by the request timeout */
    abstract Mono<Void> trackedReleaseOnServer(String name, String owner, LockOptions options);

    /** A release after a scoped body that the store did not confirm: counted. */
    abstract void releaseUnconfirmed();

    // ---- what an acquire ({@link AcquireOperation}, the one acquire loop of every concept) asks of its engine

    /** The engine's acquires in progress: counted by its metrics, failed by its close. */
    final Registry<AcquireOperation> operations = new Registry<>();

    /** @return whether the engine was closed */
    abstract boolean isClosed();

    /** A new acquire whose subscriber has its subscription: registered and started, or failed when closed. */
    final void register(AcquireOperation op) {
        if (isClosed()) {
            op.closed();
            return;
        }
        operations.add(op);
        if (isClosed()) { // closed meanwhile: its close may not have seen this acquire
            op.closed();
            return;
        }
        op.start();
    }

    /** The acquire ended: out of the engine's registry. */
    final void operationEnded(AcquireOperation op) {
        operations.remove(op);
    }

    /** @return to run once the request in flight of an ended acquire settled ({@code close()} waits for it) */
    abstract Runnable pendingCleanUp(String name);

    /**
     * @param granted whether the store granted to {@code owner} (else a clean-up of what a request may have left:
     *                not worth a WARN line when the store is down)
     * @return the owner-checked release, already sent; completes when answered (failures are logged, not signalled)
     */
    abstract Mono<Void> releaseDetached(String name, String owner, LockOptions options, boolean granted);

    /** @return the request timeouts of requests timed on {@code scheduler} with {@code clock} */
    abstract RequestDeadlines deadlines(Scheduler scheduler, LockClock clock);

    /** @return the scheduler of a call's timers: the options' one, else the engine's own */
    abstract Scheduler schedulerFor(LockOptions options);

    /** @return the listener of one acquire of {@code name} (scoped to the subscriber's context) */
    abstract SafeListener acquireListener(String name, ContextView context);

    /** @return a new held lease of this engine, registered (and released at once if the engine closed meanwhile) */
    abstract LeaseHandle newLease(String name, String owner, long token, LockOptions options, Scheduler scheduler,
                                  long validUntil, SafeListener leaseListener);

    /**
     * @param name the name
     * @param mark {@link #releaseMark} taken before {@code op}'s last request was sent, or null
     * @param op   the acquire to wake
     * @return the subscription that wakes {@code op} when what stands in its way may have gone. Joining a
     *         subscription that is live already wakes {@code op} once to re-check (a release may have been
     *         notified between its request and the join) — unless {@code mark} shows that none was
     */
    abstract Disposable wakes(String name, boolean wakesAll, @Nullable Object mark, AcquireOperation op);

    /**
     * @param name the name
     * @return a mark of the release notifications of {@code name} seen so far, when its subscription is live;
     *         null when none is (then a waiter joining later re-checks)
     */
    abstract @Nullable Object releaseMark(String name);

    /** @return the typed error of a failed acquire request */
    abstract LockException acquireError(String name, Throwable error);

    /** @return one attempt of a lock acquire (lock stores only) */
    Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.error(new UnsupportedOperationException("not a lock store"));
    }

    /** @return whether a grant store keeps the place of a refused request and wakes it ({@code GrantStore#queues}) */
    boolean queuesGrants() {
        return false;
    }

    /** @return completes when what stands before {@code owners} in the store's line went ({@code GrantStore#awaitTurn}) */
    Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.empty();
    }
}
