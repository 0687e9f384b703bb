package io.reactivelocks.spi;

import io.reactivelocks.LockClock;
import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a store must provide for the engine ({@code io.reactivelocks.internal}) to run locks on
 * it: grant, renew (batched), release, inspect and notify. The engine is written once; a backend
 * only talks to its store. Every method is lazy (nothing is sent before subscribe) and must never
 * block. Errors should be {@link io.reactivelocks.LockBackendException} with the right
 * {@code isTransient()}; the engine maps anything else (timeouts and I/O errors as transient).
 *
 * <p>Two kinds of store fit:
 * <ul>
 *   <li><b>Polling stores</b> (Redis, PostgreSQL, in-memory): {@link #tryGrant} answers
 *       {@link Attempt.Granted} or {@link Attempt.Busy}; the engine waits for a
 *       {@link LockEvent.Released} from {@link #events}, the holder's TTL or a backoff step.</li>
 *   <li><b>Queueing stores</b> (etcd, ZooKeeper): when {@link GrantRequest#queue()} is true,
 *       {@link #tryGrant} may enqueue the owner and answer {@link Attempt.Queued} with a
 *       {@code turn} that resolves when its predecessor is gone (no thundering herd). The
 *       engine deletes the queue entry through {@link #release} if the waiter gives up.</li>
 * </ul>
 * and two kinds of renewal ({@link #renewalMode()}): per lease, driven by the engine in
 * batches ({@link #renew}), or per session ({@link #sessionRenewals}), where one store-side
 * session keeps every lock of the client alive (etcd lease, ZooKeeper session).
 */
public interface LockBackend {

    /** @return a short name of the store for messages and metrics, e.g. {@code "redis"} */
    String name();

    /**
     * One attempt to take the lock for {@code request.owner()}. Must be idempotent for an owner:
     * if the same owner already holds the lock (a retried request whose first answer was lost),
     * answer {@link Attempt.Granted} again.
     *
     * <p>Cancelling the returned {@code Mono} (the engine does so when the request timeout
     * passes) does not recall a request already sent: it may still take effect on the store. The
     * engine then releases the owner, but that release can arrive first and find nothing. A key
     * with its own TTL expires by it; a backend whose keys live as long as the client's session
     * (etcd, ZooKeeper) must follow such a request to its end and delete what it created then.
     *
     * @param request what to grant
     * @return the answer
     */
    Mono<Attempt> tryGrant(GrantRequest request);

    /**
     * Renews many leases in as few round trips as the store allows (the engine batches leases
     * that are due in the same tick). Each lease is owner-checked: a lease whose key is gone or
     * belongs to another owner gets {@link RenewOutcome#notHeld()}.
     *
     * @param batch the leases to renew, never empty
     * @return one outcome per request, in the same order
     */
    Mono<List<RenewOutcome>> renew(List<RenewRequest> batch);

    /**
     * Owner-checked release (compare-and-delete) of the held lock or the queue entry of
     * {@code owner}. Never removes another owner's key. Publishes the release to waiters.
     *
     * @param name  the lock name
     * @param owner the owner id
     * @return {@code true} when something of this owner was deleted, {@code false} when nothing was
     */
    Mono<Boolean> release(String name, String owner);

    /**
     * Replaces the payload stored with a held grant, only while the store still holds exactly
     * that grant ({@code lock.owner()} and {@code lock.token()}); keeps its TTL. Notifies like a
     * grant does (an {@link LockEvent.Acquired} for the same holder), so that observers re-read
     * the holder and see the new payload.
     *
     * @param lock    the held grant
     * @param payload the new payload (already checked), or {@code null} to remove it
     * @return {@code true} when written, {@code false} when that grant is no longer held
     */
    default Mono<Boolean> updatePayload(HeldLock lock, @Nullable String payload) {
        return Mono.error(new UnsupportedOperationException(name() + " does not store lock payloads"));
    }

    /**
     * Reads who holds the lock now (with the payload stored with the grant).
     *
     * @param name the lock name
     * @return the holder, or empty when the lock is free
     */
    Mono<Holder> inspect(String name);

    /**
     * How many clients wait in the store's queue of {@code name}, for
     * {@link io.reactivelocks.admin.LockAdmin#list}: a fair lock's line, the lock queue of a store
     * that queues natively (etcd, ZooKeeper), the holder not counted.
     *
     * @param name the lock name
     * @return the number of waiters; {@code -1} (the default) when the store keeps no queue for the
     *         name (its waiters back off and listen)
     */
    default Mono<Integer> waiting(String name) {
        return Mono.just(-1);
    }

    /**
     * Sends a revocation request to the holder of {@code name} over the store's notification
     * channel: every client listening to {@link #events} of the name receives a
     * {@link LockEvent.Revoked} (the holder's {@link io.reactivelocks.Lease#revoked()} listens).
     * Nothing is stored: a request nobody listens to is gone.
     *
     * @param name   the lock name
     * @param owner  the holder asked (a later holder ignores the request)
     * @param reason why, in words
     * @return completes when the store took the request; errors with
     *         {@link UnsupportedOperationException} (the default) when the store cannot send one
     */
    default Mono<Void> revoke(String name, String owner, String reason) {
        return Mono.error(new UnsupportedOperationException(name() + " cannot send revocation requests"));
    }

    /**
     * A hot stream of changes of one lock. It emits {@link LockEvent.Subscribed} first, once the
     * store-side subscription is live (so the engine can re-check without missing a release),
     * then {@link LockEvent.Acquired}/{@link LockEvent.Released} as they happen, and
     * {@code Subscribed} again after the store-side subscription was lost and re-established
     * (waiters and observers re-check then); it completes when the backend closes. The engine shares one subscription per name; cancelling
     * unsubscribes on the store. {@code Subscribed} promises a {@code Released} for every way the
     * lock frees up other than its holder's expiry: a waiter whose subscription is live waits for a
     * notification or the holder's TTL, not for its next backoff step. A backend without
     * notifications returns a stream that never emits {@code Subscribed} (waiters then rely on TTL
     * and backoff; observers read the state once at the start and at each holder's expiry).
     *
     * @param name the lock name
     * @return the event stream
     */
    Flux<LockEvent> events(String name);

    /**
     * The change stream of one lock as its waiters need it: as {@link #events}, except that the store
     * may leave {@link LockEvent.Acquired} out (a waiter of a mutex wakes on releases; the grants are for
     * observers). A store whose announcements cost (PostgreSQL's {@code NOTIFY} serializes commits)
     * announces a grant only while someone observes the name, not while someone merely waits for it.
     * Revocation requests ({@link LockEvent.Revoked}) come on both streams.
     *
     * @param name the lock name
     * @return the event stream; {@link #events} by default
     */
    default Flux<LockEvent> wakeUps(String name) {
        return events(name);
    }

    /**
     * @return whether {@link #wakeUps} leaves grants out, so that the engine keeps the observers'
     *         {@link #events} subscription apart from the waiters'; {@code false} by default (one
     *         subscription per name serves both)
     */
    default boolean wakeUpsOmitGrants() {
        return false;
    }

    /** @return how held locks are kept alive; {@link RenewalMode#PER_LEASE} by default */
    default RenewalMode renewalMode() {
        return RenewalMode.PER_LEASE;
    }

    /**
     * For {@link RenewalMode#SESSION} backends: the confirmations that keep this lease alive —
     * one {@link Renewal} each time the store confirmed the session (keep-alive answer, cheap
     * check of the owner's node). The stream completes or errors when the lease is lost
     * (session expired, owner key gone); the engine cancels it on release.
     *
     * @param lease the held lease
     * @param clock the clock to time-stamp each confirmation's request with
     * @return the confirmations
     */
    default Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return Flux.error(new UnsupportedOperationException(name() + " renews per lease"));
    }

    /**
     * Closes connections the backend owns (not those the application passed in). Idempotent,
     * and bounded in time even when the store does not answer (a few seconds at most).
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
