package io.reactivelocks.redis;

import io.reactivelocks.task.TaskQueue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
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
 * <p><b>Topologies.</b> A {@link RedisClient} may point at one server or, with a Sentinel URI
 * ({@code redis-sentinel://s1:26379,s2:26379,s3:26379#mymaster}), at the master the Sentinels name:
 * Lettuce asks the Sentinels for the master on every (re)connect, and the Sentinels disconnect the
 * clients of a demoted master, so the lock client follows a failover. A {@link RedisClusterClient}
 * gives every concept on a Redis Cluster ({@link #create(RedisClusterClient, RedisLockOptions, LockOptions)}
 * and the concept factories taking one): every script touches only the keys of one name, which share
 * one hash tag and so one slot. Redis replicates asynchronously under Sentinel and in a cluster: a
 * failover right after a grant may forget it, so a second client can be granted the same name while
 * the first still holds it; the fencing token stays strictly increasing across the failover (it is
 * floored by the new master's clock), so a fenced resource still refuses the older holder.
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
     * @param client the application's Redis Cluster client (see {@link RedisLockBackend#create(RedisClusterClient, RedisLockOptions)}
     *               for the topology refresh it should have)
     * @return a lock client on the cluster with {@link LockOptions#defaults()} and {@link RedisLockOptions#defaults()}
     */
    public static LockClient create(RedisClusterClient client) {
        return create(client, RedisLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's Redis Cluster client
     * @param options the lock client's default options
     * @return a lock client on the cluster with {@link RedisLockOptions#defaults()}
     */
    public static LockClient create(RedisClusterClient client, LockOptions options) {
        return create(client, RedisLockOptions.defaults(), options);
    }

    /**
     * A lock client on a Redis Cluster: the mutex of {@link #create(RedisClient, RedisLockOptions, LockOptions)}
     * with each name's keys on the slot of its hash tag, renewal batches split per slot, and release
     * notifications by pub/sub over the cluster. Nothing connects before the first operation.
     *
     * @param client       the application's Redis Cluster client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime ({@link RedisLockOptions#uri()} is ignored)
     * @param options      the lock client's default options
     * @return a lock client over {@link RedisLockBackend#create(RedisClusterClient, RedisLockOptions)}
     */
    public static LockClient create(RedisClusterClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return LockClient.create(RedisLockBackend.create(client, redisOptions), options);
    }

    /**
     * @param client       the application's Redis Cluster client
     * @param redisOptions key prefix, fencing counter lifetime
     * @return a new backend on the cluster, to share between concepts (the factories taking a
     *         {@link RedisLockBackend}); its owner closes it
     */
    public static RedisLockBackend backend(RedisClusterClient client, RedisLockOptions redisOptions) {
        return RedisLockBackend.create(client, redisOptions);
    }

    /**
     * A fair lock client on a Redis Cluster (the name's lock, queue and deadlines share its slot);
     * otherwise as {@link #fairLock(RedisClient, RedisLockOptions, LockOptions)}.
     *
     * @param client       the application's Redis Cluster client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime
     * @param options      the lock client's default options
     * @return a lock client whose waiters are granted in arrival order
     */
    public static LockClient fairLock(RedisClusterClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return LockClient.create(new RedisFairLockBackend(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * A window lock on a Redis Cluster; otherwise as {@link #windowLock(RedisClient, RedisLockOptions, LockOptions)}.
     *
     * @param client       the application's Redis Cluster client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime
     * @param options      request timeout, drift allowance and clock of the claims
     * @return a window lock
     */
    public static WindowLock windowLock(RedisClusterClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return WindowLock.create(new RedisWindowStore(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * A semaphore on a Redis Cluster (a name's holders, tokens and counter share its slot);
     * otherwise as {@link #semaphore(RedisClient, RedisLockOptions, LockOptions)}.
     *
     * @param client       the application's Redis Cluster client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime
     * @param options      the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore
     */
    public static Semaphore semaphore(RedisClusterClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return Semaphore.create(new RedisSemaphoreStore(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * A read-write lock on a Redis Cluster (a name's grants, tokens, modes, intents and counter share
     * its slot); otherwise as {@link #readWriteLock(RedisClient, RedisLockOptions, ReadWriteLockOptions)}.
     *
     * @param client       the application's Redis Cluster client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime
     * @param options      the grants' timing and the policy
     * @return a read-write lock
     */
    public static ReadWriteLock readWriteLock(RedisClusterClient client, RedisLockOptions redisOptions, ReadWriteLockOptions options) {
        Objects.requireNonNull(options, "options");
        return ReadWriteLock.create(new RedisReadWriteStore(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * Fenced values on a Redis Cluster; otherwise as {@link #fencedValues(RedisClient, RedisLockOptions)}.
     *
     * @param client       the application's Redis Cluster client (not closed)
     * @param redisOptions key prefix
     * @return fenced values
     */
    public static FencedValues fencedValues(RedisClusterClient client, RedisLockOptions redisOptions) {
        return new RedisFencedValues(RedisLockBackend.create(client, redisOptions));
    }

    /**
     * A task queue on a Redis Cluster (a queue's keys share its slot); otherwise as
     * {@link #taskQueue(RedisClient, RedisLockOptions, LockOptions)}.
     *
     * @param client       the application's Redis Cluster client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime
     * @param options      claim time (the lease time), renewal, backoff, timeouts, clock and scheduler
     * @return a task queue; closing it closes its connections
     */
    public static TaskQueue taskQueue(RedisClusterClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return TaskQueue.create(new RedisTaskStore(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * @param client       the application's Redis client
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @return a new backend, for {@link LockClient#create(io.reactivelocks.spi.LockBackend, LockOptions)},
     *         {@link #taskQueue(RedisLockBackend, LockOptions)} or {@link RedisQuorumBackend}
     */
    public static RedisLockBackend backend(RedisClient client, RedisLockOptions redisOptions) {
        return RedisLockBackend.create(client, redisOptions);
    }

    /**
     * @param client the application's Redis client
     * @return a fair lock client with {@link RedisLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #fairLock(RedisClient, RedisLockOptions, LockOptions)
     */
    public static LockClient fairLock(RedisClient client) {
        return fairLock(client, RedisLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's Redis client
     * @param options the lock client's default options
     * @return a fair lock client with {@link RedisLockOptions#defaults()}
     * @see #fairLock(RedisClient, RedisLockOptions, LockOptions)
     */
    public static LockClient fairLock(RedisClient client, LockOptions options) {
        return fairLock(client, RedisLockOptions.defaults(), options);
    }

    /**
     * A fair (FIFO) lock client on Redis: waiters are granted in arrival order. Each name has a
     * queue (a sorted set by arrival) of waiters with deadlines by the server's {@code TIME}
     * (twice the lease time, at least 1 s), which a waiting client refreshes, so that an abandoned
     * waiter expires instead of blocking the queue; one script drops expired waiters, enqueues the
     * caller and grants the head when the lock is free. A waiter wakes on the lock's release
     * notification (pub/sub), the holder's TTL or the head waiter's deadline. {@code tryAcquire}
     * never joins the queue and does not pass waiters; a cancelled waiter leaves the queue at
     * once. The held lock uses the mutex's keys and fencing counter (see {@link RedisLocks#create}),
     * so tokens, renewal, {@code observe} and payloads are the mutex's. It opens its own
     * connections on first use; closing the client closes them.
     *
     * @param client       the application's Redis client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @param options      the lock client's default options
     * @return a lock client whose waiters are granted in arrival order
     */
    public static LockClient fairLock(RedisClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return LockClient.create(new RedisFairLockBackend(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * A fair lock client sharing the connections and key prefix of an existing backend; closing
     * the client leaves the backend open. Otherwise as
     * {@link #fairLock(RedisClient, RedisLockOptions, LockOptions)}.
     *
     * @param backend the backend to share; its owner closes it
     * @param options the lock client's default options
     * @return a lock client whose waiters are granted in arrival order
     */
    public static LockClient fairLock(RedisLockBackend backend, LockOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        return LockClient.create(new RedisFairLockBackend(backend, false), options);
    }

    /**
     * @param client the application's Redis client
     * @return a window lock with {@link RedisLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #windowLock(RedisClient, RedisLockOptions, LockOptions)
     */
    public static WindowLock windowLock(RedisClient client) {
        return windowLock(client, RedisLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client the application's client
     * @param options request timeout, drift allowance and clock of the claims
     * @return a window lock with {@link RedisLockOptions#defaults()}
     * @see #windowLock(RedisClient, RedisLockOptions, LockOptions)
     */
    public static WindowLock windowLock(RedisClient client, LockOptions options) {
        return windowLock(client, RedisLockOptions.defaults(), options);
    }

    /**
     * A window lock on Redis: the window is {@code floor(server TIME in ms / period)}, decided by the
     * server's clock in one script ({@code ZADD GT CH} of the window index, so the first caller of a
     * window wins and a stored window never goes back); the claim's token comes from a per-name
     * counter floored by the server's {@code TIME} in µs, like a lock's. The window key expires when
     * its longest period's window ends. It opens its own command connection on first use and closes
     * it with {@link WindowLock#close()}.
     *
     * @param client       the application's Redis client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @param options      request timeout, drift allowance and clock of the claims
     * @return a window lock
     */
    public static WindowLock windowLock(RedisClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return WindowLock.create(new RedisWindowStore(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * A window lock sharing the command connection and key prefix of an existing backend (for
     * instance one built over the application's own connections); {@link WindowLock#close()} leaves
     * the backend open. Otherwise as {@link #windowLock(RedisClient, RedisLockOptions, LockOptions)}.
     *
     * @param backend the backend to share; its owner closes it
     * @param options request timeout, drift allowance and clock of the claims
     * @return a window lock
     */
    public static WindowLock windowLock(RedisLockBackend backend, LockOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        return WindowLock.create(new RedisWindowStore(backend, false), options);
    }

    /**
     * @param client the application's Redis client
     * @return a semaphore with {@link RedisLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #semaphore(RedisClient, RedisLockOptions, LockOptions)
     */
    public static Semaphore semaphore(RedisClient client) {
        return semaphore(client, RedisLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's client
     * @param options the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore with {@link RedisLockOptions#defaults()}
     * @see #semaphore(RedisClient, RedisLockOptions, LockOptions)
     */
    public static Semaphore semaphore(RedisClient client, LockOptions options) {
        return semaphore(client, RedisLockOptions.defaults(), options);
    }

    /**
     * A semaphore on Redis: per name a sorted set of holders (owner → expiry by the server's
     * {@code TIME}) and a hash of their tokens, changed by one script per operation that drops
     * expired holders and grants while fewer than N remain; each permit's token comes from a
     * per-name counter floored by the server's {@code TIME} in µs, like a lock's; releases are
     * published on the semaphore's channel to wake waiters. It opens its own connections on first
     * use and closes them with {@link Semaphore#close()}.
     *
     * @param client       the application's Redis client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @param options      the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore
     */
    public static Semaphore semaphore(RedisClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return Semaphore.create(new RedisSemaphoreStore(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * A semaphore sharing the connections and key prefix of an existing backend;
     * {@link Semaphore#close()} leaves the backend open. Otherwise as
     * {@link #semaphore(RedisClient, RedisLockOptions, LockOptions)}.
     *
     * @param backend the backend to share; its owner closes it
     * @param options the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore
     */
    public static Semaphore semaphore(RedisLockBackend backend, LockOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        return Semaphore.create(new RedisSemaphoreStore(backend, false), options);
    }

    /**
     * @param client the application's Redis client
     * @return a writer-preferring read-write lock with {@link RedisLockOptions#defaults()} and {@link LockOptions#defaults()}
     * @see #readWriteLock(RedisClient, RedisLockOptions, ReadWriteLockOptions)
     */
    public static ReadWriteLock readWriteLock(RedisClient client) {
        return readWriteLock(client, RedisLockOptions.defaults(), ReadWriteLockOptions.defaults());
    }

    /**
     * @param client  the application's client
     * @param options the grants' timing and the policy
     * @return a read-write lock with {@link RedisLockOptions#defaults()}
     * @see #readWriteLock(RedisClient, RedisLockOptions, ReadWriteLockOptions)
     */
    public static ReadWriteLock readWriteLock(RedisClient client, ReadWriteLockOptions options) {
        return readWriteLock(client, RedisLockOptions.defaults(), options);
    }

    /**
     * A read-write lock on Redis: per name a sorted set of grants (owner → expiry by the server's
     * {@code TIME}) with hashes of their tokens and modes, and a sorted set of waiting writers'
     * intents that expire one lease time after their writer's last attempt, changed by one script
     * per operation; each grant's token comes from a per-name counter floored by the server's
     * {@code TIME} in µs, like a lock's; releases are published on the lock's channel to wake
     * waiters. It opens its own connections on first use and closes them with
     * {@link ReadWriteLock#close()}.
     *
     * @param client       the application's Redis client (not closed)
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @param options      the grants' timing and the policy
     * @return a read-write lock
     */
    public static ReadWriteLock readWriteLock(RedisClient client, RedisLockOptions redisOptions, ReadWriteLockOptions options) {
        Objects.requireNonNull(options, "options");
        return ReadWriteLock.create(new RedisReadWriteStore(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * A read-write lock sharing the connections and key prefix of an existing backend;
     * {@link ReadWriteLock#close()} leaves the backend open. Otherwise as
     * {@link #readWriteLock(RedisClient, RedisLockOptions, ReadWriteLockOptions)}.
     *
     * @param backend the backend to share; its owner closes it
     * @param options the grants' timing and the policy
     * @return a read-write lock
     */
    public static ReadWriteLock readWriteLock(RedisLockBackend backend, ReadWriteLockOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(options, "options");
        return ReadWriteLock.create(new RedisReadWriteStore(backend, false), options);
    }

    /**
     * @param client the application's Redis client
     * @return fenced values with {@link RedisLockOptions#defaults()}
     * @see #fencedValues(RedisClient, RedisLockOptions)
     */
    public static FencedValues fencedValues(RedisClient client) {
        return fencedValues(client, RedisLockOptions.defaults());
    }

    /**
     * Fenced values on Redis: each key is a hash holding the value beside its fence, and one script
     * compares the writer's token with the fence and writes both atomically
     * ({@link io.reactivelocks.fencing.Fencing#admits}). Keys live under the key prefix, without
     * TTL. It opens its own command connection on first use and closes it with
     * {@link FencedValues#close()}.
     *
     * @param client       the application's Redis client (not closed)
     * @param redisOptions key prefix, URI
     * @return fenced values
     */
    public static FencedValues fencedValues(RedisClient client, RedisLockOptions redisOptions) {
        return new RedisFencedValues(RedisLockBackend.create(client, redisOptions));
    }

    /**
     * A task queue on Redis over a backend of its own (its own connections, opened on first use);
     * closing the queue closes them. See {@link TaskQueue} for the semantics.
     *
     * @param client the application's Redis client
     * @return a task queue with {@link LockOptions#defaults()} (claims of 30 s) and {@link RedisLockOptions#defaults()}
     * @throws NullPointerException when client is null
     */
    public static TaskQueue taskQueue(RedisClient client) {
        return taskQueue(client, RedisLockOptions.defaults(), LockOptions.defaults());
    }

    /**
     * @param client  the application's Redis client
     * @param options claim time (the lease time), renewal, backoff, timeouts, clock and scheduler
     * @return a task queue with {@link RedisLockOptions#defaults()}; closing it closes its connections
     * @throws NullPointerException when an argument is null
     */
    public static TaskQueue taskQueue(RedisClient client, LockOptions options) {
        return taskQueue(client, RedisLockOptions.defaults(), options);
    }

    /**
     * @param client       the application's Redis client
     * @param redisOptions key prefix, fencing counter lifetime, URI
     * @param options      claim time (the lease time), renewal, backoff, timeouts, clock and scheduler
     * @return a task queue over a new {@link RedisLockBackend}; closing it closes that backend
     * @throws NullPointerException when an argument is null
     */
    public static TaskQueue taskQueue(RedisClient client, RedisLockOptions redisOptions, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return TaskQueue.create(new RedisTaskStore(RedisLockBackend.create(client, redisOptions), true), options);
    }

    /**
     * A task queue sharing a backend's connections and key prefix (with lock clients, say); closing
     * the queue leaves the backend open.
     *
     * @param backend the backend to share
     * @param options claim time (the lease time), renewal, backoff, timeouts, clock and scheduler
     * @return a task queue
     * @throws NullPointerException when an argument is null
     */
    public static TaskQueue taskQueue(RedisLockBackend backend, LockOptions options) {
        Objects.requireNonNull(options, "options");
        return TaskQueue.create(new RedisTaskStore(backend, false), options);
    }
}
