package io.reactivelocks.fencing;

import reactor.core.publisher.Mono;

/**
 * A fenced key/value resource: each key keeps the highest token accepted for it (its fence)
 * beside its value, and every write compares and sets both in one atomic step on the store,
 * following {@link Fencing#admits}: a token equal to the fence is accepted (the same grant writing
 * again), a lower one refused, a higher one accepted and raising the fence.
 *
 * <pre>{@code
 * FencedValues values = store.fencedValues();   // store = RedisLocks.connect(redis), PostgresLocks.connect(db), ...; or new LocalFencedValues()
 * locks.withLock("config", lease -> values.write("config", lease.token(), json)
 *      .flatMap(accepted -> accepted ? Mono.just(ok)
 *              : Mono.error(new StaleTokenException("config", lease.token(), OptionalLong.empty()))));
 * }</pre>
 *
 * <p>Keys follow the lock-name rules (non-empty, at most 1024 UTF-8 bytes); values are strings
 * (stored as UTF-8; a lone surrogate is not preserved). Every method is lazy — one store request
 * per subscription — and errors with {@link io.reactivelocks.LockBackendException} when the store
 * fails; cancelling does not recall a request already sent.
 */
public interface FencedValues {

    /**
     * Writes {@code value} under {@code key} if {@link Fencing#admits} the token against the key's
     * fence (a key never written admits any token), and raises the fence to {@code token}.
     *
     * @param key   the key
     * @param token the writer's fencing token, e.g. {@code lease.token()}
     * @param value the value
     * @return {@code true} when the write was accepted, {@code false} when refused (a newer writer's
     *         token is on the key)
     * @throws NullPointerException     when the key or the value is null
     * @throws IllegalArgumentException when the key is empty or too long
     */
    Mono<Boolean> write(String key, long token, String value);

    /**
     * @param key the key
     * @return the value and its fence, empty when the key has no value
     * @throws NullPointerException     when the key is null
     * @throws IllegalArgumentException when the key is empty or too long
     */
    Mono<FencedValue> read(String key);

    /**
     * Deletes the value of {@code key} if {@link Fencing#admits} the token against the key's fence,
     * and raises the fence to {@code token}. The fence stays after the value is gone, so a writer
     * with an older token cannot bring the value back.
     *
     * @param key   the key
     * @param token the writer's fencing token
     * @return {@code true} when the delete was admitted (whether or not there was a value),
     *         {@code false} when refused
     * @throws NullPointerException     when the key is null
     * @throws IllegalArgumentException when the key is empty or too long
     */
    Mono<Boolean> delete(String key, long token);

    /**
     * Releases the connections this resource opened (not those passed in). Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
