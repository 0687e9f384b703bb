package io.reactivelocks.spi.semaphore;

import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a store provides for the semaphore engine. Every method is lazy (nothing is sent before
 * subscribe), never blocks, and signals store failures as
 * {@link io.reactivelocks.LockBackendException} (the engine maps anything else, timeouts and I/O
 * errors as transient). Expiry is decided by the store's clock.
 */
public interface SemaphoreStore {

    /** @return a short name of the store for messages, e.g. {@code "redis"} */
    String name();

    /**
     * One atomic attempt: removes expired holders of {@code name}, then grants one permit to each of
     * {@code owners} if the unexpired holders plus {@code owners.size()} are at most
     * {@code permits}; otherwise grants nothing. Idempotent per owner: owners that hold already (a
     * retried request) are granted again with their tokens and a fresh TTL.
     *
     * @param name      the semaphore name
     * @param owners    the new holders' owner ids, at least one
     * @param permits   N, the most holders the semaphore may have at the time of this grant
     * @param leaseTime the TTL of each permit
     * @return {@link PermitGrant.Granted} with one token per owner, or {@link PermitGrant.Busy}
     */
    Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime);

    /**
     * Renews permits, owner- and token-checked: a permit that expired or is not this owner's gets
     * {@link RenewOutcome#notHeld()}.
     *
     * @param batch the permits to renew ({@code lock.name()} is the semaphore name), never empty
     * @return one outcome per request, in order
     */
    Mono<List<RenewOutcome>> renew(List<RenewRequest> batch);

    /**
     * Owner-checked release of one permit; publishes the release to waiters.
     *
     * @param name  the semaphore name
     * @param owner the permit's owner id
     * @return {@code true} when the permit was held and is now released
     */
    Mono<Boolean> release(String name, String owner);

    /**
     * @param name the semaphore name
     * @return the unexpired holders, in token order
     */
    Mono<List<Holder>> holders(String name);

    /**
     * A hot stream of changes of one semaphore: {@link LockEvent.Subscribed} once the store-side
     * subscription is live (and again after it was re-established), then
     * {@link LockEvent.Acquired}/{@link LockEvent.Released} as they happen. Completes when the
     * store closes; a store without notifications emits {@code Subscribed} only.
     *
     * @param name the semaphore name
     * @return the event stream
     */
    Flux<LockEvent> events(String name);

    /**
     * Closes what the store opened itself (not what the application passed in). Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
