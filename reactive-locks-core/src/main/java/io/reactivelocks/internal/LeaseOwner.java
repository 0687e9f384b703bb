package io.reactivelocks.internal;

import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.Renewal;
import io.reactivelocks.spi.RenewalMode;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

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
}
