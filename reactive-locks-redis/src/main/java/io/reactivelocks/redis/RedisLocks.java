package io.reactivelocks.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.reactivelocks.LockStore;
import java.util.Objects;

/**
 * Entry point: a store session on Redis, which hands out every concept.
 *
 * <pre>{@code
 * RedisClient redis = RedisClient.create("redis://localhost:6379");
 * LockStore store = RedisLocks.connect(redis);
 * LockClient locks = store.locks();
 * Mono<Receipt> r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p><b>Topologies.</b> A {@link RedisClient} may point at one server or, with a Sentinel URI
 * ({@code redis-sentinel://s1:26379,s2:26379,s3:26379#mymaster}), at the master the Sentinels name:
 * Lettuce asks the Sentinels for the master on every (re)connect, and the Sentinels disconnect the
 * clients of a demoted master, so the lock client follows a failover. A {@link RedisClusterClient}
 * gives every concept on a Redis Cluster ({@link #connect(RedisClusterClient, RedisLockOptions)}):
 * every script touches only the keys of one name, which share
 * one hash tag and so one slot. Redis replicates asynchronously under Sentinel and in a cluster: a
 * failover right after a grant may forget it, so a second client can be granted the same name while
 * the first still holds it; the fencing token stays strictly increasing across the failover (it is
 * floored by the new master's clock), so a fenced resource still refuses the older holder.
 *
 * <p>{@code connect} returns at once: nothing connects before the first operation is subscribed.
 * Closing the session releases the leases of everything it handed out and closes the connections
 * it opened; the {@link RedisClient} stays the application's to shut down. To pass connections in,
 * build a {@link RedisLockBackend} and call {@link #connect(RedisLockBackend)}.
 */
public final class RedisLocks {

    private RedisLocks() {
    }

    /**
     * @param client the application's Redis client (not closed by the session)
     * @return a session with {@link RedisLockOptions#defaults()}
     * @see #connect(RedisClient, RedisLockOptions)
     */
    public static LockStore connect(RedisClient client) {
        return connect(client, RedisLockOptions.defaults());
    }

    /**
     * A session with Redis that hands out every concept — locks, fair locks, semaphores,
     * read-write locks, multi-locks, window locks, elections, fenced values, task queues — over
     * one command and one pub/sub connection, opened on first use. Closing the session closes
     * every concept it handed out, then those two connections; the client stays the application's.
     *
     * @param client       the application's Redis client (one server, or Sentinel by URI)
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @return the session
     * @throws NullPointerException naming the argument when one is null
     */
    public static LockStore connect(RedisClient client, RedisLockOptions redisOptions) {
        return new RedisStoreSession(RedisLockBackend.create(client, redisOptions));
    }

    /**
     * @param client the application's Redis Cluster client (not closed by the session)
     * @return a session with {@link RedisLockOptions#defaults()}
     * @see #connect(RedisClusterClient, RedisLockOptions)
     */
    public static LockStore connect(RedisClusterClient client) {
        return connect(client, RedisLockOptions.defaults());
    }

    /**
     * A session with a Redis Cluster that hands out every concept over the cluster client's one
     * command connection and one pub/sub connection; as {@link #connect(RedisClient, RedisLockOptions)}.
     *
     * @param client       the application's cluster client
     * @param redisOptions key prefix, fencing counter lifetime
     * @return the session
     * @throws NullPointerException naming the argument when one is null
     */
    public static LockStore connect(RedisClusterClient client, RedisLockOptions redisOptions) {
        return new RedisStoreSession(RedisLockBackend.create(client, redisOptions));
    }

    /**
     * A session over a backend the application built (for instance over its own connections,
     * {@link RedisLockBackend#create(io.lettuce.core.api.StatefulRedisConnection,
     * io.lettuce.core.pubsub.StatefulRedisPubSubConnection, RedisLockOptions)}); closing the session
     * closes the backend.
     *
     * @param backend the backend, owned by the session from now on
     * @return the session
     * @throws NullPointerException when {@code backend} is null
     */
    public static LockStore connect(RedisLockBackend backend) {
        return new RedisStoreSession(Objects.requireNonNull(backend, "backend"));
    }

    /**
     * @param client       the application's Redis Cluster client
     * @param redisOptions key prefix, fencing counter lifetime
     * @return a new backend on the cluster, for {@link #connect(RedisLockBackend)} (which then owns it) or
     *         {@link io.reactivelocks.LockClient#create(io.reactivelocks.spi.LockBackend, io.reactivelocks.LockOptions)}
     */
    public static RedisLockBackend backend(RedisClusterClient client, RedisLockOptions redisOptions) {
        return RedisLockBackend.create(client, redisOptions);
    }

    /**
     * @param client       the application's Redis client
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @return a new backend, for {@link #connect(RedisLockBackend)} (which then owns it),
     *         {@link io.reactivelocks.LockClient#create(io.reactivelocks.spi.LockBackend, io.reactivelocks.LockOptions)}
     *         or {@link RedisQuorumBackend}
     */
    public static RedisLockBackend backend(RedisClient client, RedisLockOptions redisOptions) {
        return RedisLockBackend.create(client, redisOptions);
    }
}
