package io.reactivelocks.spi.semaphore;

import io.reactivelocks.spi.GrantStore;
import io.reactivelocks.spi.Holder;
import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * What a store provides for the semaphore engine. Every method is lazy (nothing is sent before
 * subscribe), never blocks, and signals store failures as
 * {@link io.reactivelocks.LockBackendException} (the engine maps anything else, timeouts and I/O
 * errors as transient). Expiry is decided by the store's clock.
 */
public interface SemaphoreStore extends GrantStore {

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
     * {@link #tryGrant(String, List, int, Duration)} that says whether the caller waits: a store that
     * {@link #queues()} may then keep a refused caller's place (its nodes or keys, never counted as
     * holders) until the caller is granted or {@link #release releases} each owner when it gives up;
     * a single attempt ({@code waiting == false}) must leave nothing when refused. The default
     * ignores {@code waiting}.
     *
     * @param name      the semaphore name
     * @param owners    the new holders' owner ids, at least one
     * @param permits   N, the most holders the semaphore may have at the time of this grant
     * @param waiting   whether the caller waits (asks again, or releases its owners when it gives up)
     * @param leaseTime the TTL of each permit
     * @return {@link PermitGrant.Granted} with one token per owner, or {@link PermitGrant.Busy}
     */
    default Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime) {
        return tryGrant(name, owners, permits, leaseTime);
    }

    /**
     * @return the most permits one request may ask for on this store (a store whose tokens or
     *         transactions bound it says so here, so that a larger {@code count} fails at call time);
     *         {@link Integer#MAX_VALUE} by default
     */
    default int maxCount() {
        return Integer.MAX_VALUE;
    }

    /**
     * Owner-checked release of one permit; publishes the release to waiters.
     *
     * @param name  the semaphore name
     * @param owner the permit's owner id
     * @return {@code true} when the permit was held and is now released
     */
    @Override
    Mono<Boolean> release(String name, String owner);

    /**
     * @param name the semaphore name
     * @return the unexpired holders, in token order
     */
    Mono<List<Holder>> holders(String name);
}
