package io.reactivelocks.spi.rwlock;

import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.GrantStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * What a store provides for the read-write lock engine. Every method is lazy (nothing is sent
 * before subscribe), never blocks, and signals store failures as
 * {@link io.reactivelocks.LockBackendException} (the engine maps anything else, timeouts and I/O
 * errors as transient). Expiry is decided by the store's clock.
 *
 * <p>Tokens: a grant's token must be greater than the token of every grant it excludes — greater
 * than every reader before a writer, greater than the last writer before a reader. A per-name
 * counter taken at grant time (or a queue position taken in grant order) gives that.
 */
public interface ReadWriteStore extends GrantStore {

    /**
     * One atomic attempt. Removes expired grants and intents of {@code name}, then:
     * <ul>
     * <li>{@link LockMode#READ}: grants when no writer holds and, if {@code writerPreferring}, no
     * writer waits;</li>
     * <li>{@link LockMode#WRITE}: grants (and drops the owner's intent) when no one holds; otherwise,
     * if {@code writerPreferring} and {@code waiting}, records or refreshes the owner's intent for
     * {@code leaseTime} (which blocks new readers until it expires or is released) and grants
     * nothing.</li>
     * </ul>
     * A store that queues natively (ZooKeeper, etcd) may keep a refused waiting caller's place in the
     * queue (a waiting writer's place is its intent). Idempotent per owner: an owner that holds
     * already (a retried request) is granted again with its token and a fresh TTL.
     *
     * @param name             the lock name
     * @param owner            the new holder's owner id
     * @param mode             read or write
     * @param writerPreferring whether waiting writers block new readers
     * @param waiting          whether the caller waits: it will ask again, or {@link #release} the owner
     *                         when it gives up, so the store may leave an intent or a queue place;
     *                         {@code false} for a single attempt, which must leave nothing when refused
     * @param leaseTime        the TTL of the grant (and of a waiting writer's intent)
     * @return {@link PermitGrant.Granted} with one token, or {@link PermitGrant.Busy}
     */
    Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting, Duration leaseTime);

    /**
     * Owner-checked release of the owner's grant or waiting writer's intent; publishes the release
     * to waiters.
     *
     * @param name  the lock name
     * @param owner the owner id
     * @return {@code true} when a grant or an intent of the owner was there and is now gone
     */
    @Override
    Mono<Boolean> release(String name, String owner);

    /**
     * @param name the lock name
     * @return the unexpired readers, writer and waiting writers' intents
     */
    Mono<ReadWriteHolders> holders(String name);
}
