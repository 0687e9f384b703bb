package io.reactivelocks.spi;

import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What the stores of the concepts whose grants are leases (semaphore permits, read-write lock
 * grants) share: renew and release grants owner-checked, publish changes, close. Each concept's
 * store adds how it grants and what it lists. Every method is lazy, never blocks, and signals store
 * failures as {@link io.reactivelocks.LockBackendException}.
 */
public interface GrantStore {

    /** @return a short name of the store for messages, e.g. {@code "redis"} */
    String name();

    /**
     * Renews grants, owner- and token-checked: a grant that expired or is not this owner's gets
     * {@link RenewOutcome#notHeld()}.
     *
     * @param batch the grants to renew ({@code lock.name()} is the concept's name), never empty
     * @return one outcome per request, in order
     */
    Mono<List<RenewOutcome>> renew(List<RenewRequest> batch);

    /**
     * Owner-checked release of what the owner has on the name; publishes the release to waiters.
     *
     * @param name  the name
     * @param owner the owner id
     * @return {@code true} when something of the owner was there and is now gone
     */
    Mono<Boolean> release(String name, String owner);

    /**
     * A hot stream of changes of one name: {@link LockEvent.Subscribed} once the store-side
     * subscription is live (and again after it was re-established), then
     * {@link LockEvent.Acquired}/{@link LockEvent.Released} as they happen. Completes when the
     * store closes. {@code Subscribed} promises a {@code Released} for every way a grant goes
     * other than its expiry (waiters with a live subscription wait for a notification or the
     * holder's TTL, not for the next backoff step); a store without notifications never emits
     * {@code Subscribed} (waiters then rely on TTL and backoff).
     *
     * @param name the name
     * @return the event stream
     */
    Flux<LockEvent> events(String name);

    /**
     * The changes of one name that its <em>waiters</em> need: as {@link #events}, but a store may leave
     * the {@link LockEvent.Acquired} grants out (a waiter wakes on {@code Released} and
     * {@code Subscribed} only), so that it announces grants only while someone observes the name —
     * where each announcement has a cost (PostgreSQL: a {@code NOTIFY} serializes its transaction's
     * commit with every other notifying one). The engine's waiters and a lease's revocation listen here;
     * observation listens to {@link #events}.
     *
     * @param name the name
     * @return the waiters' event stream; by default {@link #events}
     */
    default Flux<LockEvent> wakeUps(String name) {
        return events(name);
    }

    /**
     * Whether a refused waiting caller keeps a place in the store's own queue (ZooKeeper's sequential
     * nodes, etcd's create revisions) and the store wakes it through {@link #awaitTurn} — watching
     * only what can let it in, its predecessors — instead of the engine waking its waiters on the
     * name's {@link #events}, where every change would wake every waiting client (a herd).
     *
     * @return {@code false} by default: waiters wake on {@link #events}
     */
    default boolean queues() {
        return false;
    }

    /**
     * For a store that {@link #queues()}: a {@code Mono} that completes when a change may let the
     * owners in (what stood before their place went or changed, the watch was lost, or the store
     * knows no place of theirs: then at once), so their caller asks again. Called after an attempt
     * of these owners was refused while waiting; cancel drops the wait (a watch may stay armed on
     * the server until it fires). Errors only when the store could not even set its watch.
     *
     * @param name   the name
     * @param owners the owner ids of the refused attempt
     * @return completes when the owners should ask again; the default completes at once
     */
    default Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.empty();
    }

    /**
     * Sends a revocation request to the grant of {@code owner} on {@code name} over the store's
     * notification channel: every client listening to {@link #events} of the name receives a
     * {@link LockEvent.Revoked} (the grant's {@link io.reactivelocks.Lease#revoked()} listens).
     * Nothing is stored: a request nobody listens to is gone.
     *
     * @param name   the name
     * @param owner  the grant asked (the others ignore the request)
     * @param reason why, in words
     * @return completes when the store took the request; errors with
     *         {@link UnsupportedOperationException} (the default) when the store cannot send one
     */
    default Mono<Void> revoke(String name, String owner, String reason) {
        return Mono.error(new UnsupportedOperationException(name() + " cannot send revocation requests to grants"));
    }

    /**
     * Closes what the store opened itself (not what the application passed in). Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
