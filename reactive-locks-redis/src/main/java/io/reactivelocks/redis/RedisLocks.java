package io.reactivelocks.redis;

import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import java.util.Objects;

/**
 * Entry point: lock clients on Redis.
 *
 * <pre>{@code
 * RedisClient redis = RedisClient.create("redis://localhost:6379");
 * LockClient locks = RedisLocks.create(redis);
 * Mono<Receipt> r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p>Every factory returns at once: nothing connects before the first operation is subscribed.
 * Closing the returned client releases its leases and closes the connections the backend
 * opened; the {@link RedisClient} stays the application's to shut down. To share one backend,
 * or to pass connections in, build a {@link RedisLockBackend} and call
 * {@link LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)}.
 */
public final class RedisLocks {

    private RedisLocks() {
    }

    /**
     * @param client the application's Redis client
     * @return a lock client with {@link LockOptions#defaults()} and {@link RedisLockOptions#defaults()}
     */
    public static LockClient create(RedisClient client) {
        return create(client, RedisLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's Redis client
     * @param options the lock client's default options
     * @return a lock client with {@link RedisLockOptions#defaults()}
     */
    public static LockClient create(RedisClient client, LockOptions options) {
        return create(client, RedisLockOptions.defaults(), options);
    }

    /**
     * @param client       the application's Redis client
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @param options      the lock client's default options
     * @return a lock client over a new {@link RedisLockBackend}
     */
    public static LockClient create(RedisClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return LockClient.create(RedisLockBackend.create(client, redisOptions), options);
    }

    /**
     * @param client       the application's Redis client
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @return a new backend, for {@link LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)},
     *         {@link RedisWindowLock}, {@link RedisTaskQueue} or {@link RedisQuorumBackend}
     */
    public static RedisLockBackend backend(RedisClient client, RedisLockOptions redisOptions) {
        return RedisLockBackend.create(client, redisOptions);
    }
}
