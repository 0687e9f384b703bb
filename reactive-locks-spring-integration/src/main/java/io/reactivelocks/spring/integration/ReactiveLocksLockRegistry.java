package io.reactivelocks.spring.integration;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} over a
 * reactive-locks {@link LockClient}: aggregators, leader initiators and {@code executeLocked}
 * callers get {@link java.util.concurrent.locks.Lock}s backed by any store (Redis, PostgreSQL, etcd,
 * ZooKeeper), renewed in the background while held, with a fencing token and a loss signal
 * ({@link ReactiveLocksLock#lease()}).
 *
 * <p>As Spring Integration's {@code RedisLockRegistry} and {@code JdbcLockRegistry} do, each key
 * has one {@link ReactiveLocksLock} per registry ({@link #obtain(Object)} returns the same object);
 * within the process it is a {@link java.util.concurrent.locks.ReentrantLock} owned by a thread,
 * taken first, and the first hold also takes a lease on the store. Two registries (or two
 * processes) exclude each other through the store; two threads of one registry exclude each other
 * in-process. The lock name on the store is {@code lockKey.toString()}.
 *
 * <p>Locks block the calling thread (they implement {@code java.util.concurrent.locks.Lock}); they
 * refuse to run on a Reactor non-blocking thread with {@link IllegalStateException}. This registry
 * does not close the client.
 */
public final class ReactiveLocksLockRegistry
        implements ExpirableLockRegistry<ReactiveLocksLock>, RenewableLockRegistry<ReactiveLocksLock> {

    private final LockClient client;
    private final LockOptions options;
    private final ConcurrentMap<String, ReactiveLocksLock> locks = new ConcurrentHashMap<>();

    /**
     * A registry using the client's default options (lease time, renewal, request timeout).
     *
     * @param client the lock client (not closed by this registry)
     */
    public ReactiveLocksLockRegistry(LockClient client) {
        this(client, Objects.requireNonNull(client, "client").options());
    }

    /**
     * A registry with its own options: their lease time for {@code lock()}/{@code tryLock(..)}, their
     * renewal interval and request timeout. Their wait timeout is not used: each {@code Lock}
     * method decides how long it waits.
     *
     * @param client  the lock client (not closed by this registry)
     * @param options the options of every acquire
     */
    public ReactiveLocksLockRegistry(LockClient client, LockOptions options) {
        this.client = Objects.requireNonNull(client, "client");
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * The lock of a key: the same object for the same key until
     * {@link #expireUnusedOlderThan(long)} drops it. Does not touch the store.
     *
     * @param lockKey the key; its {@code toString()} is the lock name on the store
     * @return the lock
     */
    @Override
    public ReactiveLocksLock obtain(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey");
        String name = lockKey.toString();
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lockKey must not be empty");
        }
        return locks.computeIfAbsent(name, n -> new ReactiveLocksLock(client, options, n));
    }

    /**
     * Forgets the locks not held in this process that were last locked at least {@code age}
     * milliseconds ago, as {@code RedisLockRegistry} does; a later {@link #obtain} creates a new one.
     *
     * @param age the age in milliseconds
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.currentTimeMillis();
        locks.values().removeIf(lock -> !lock.isAcquiredInThisProcess() && now - lock.lockedAtMillis() >= age);
    }

    /**
     * Checks that the lock of this key is held: its lease is renewed in the background already
     * (every renewal interval), so there is nothing to send.
     *
     * @param lockKey the key
     * @throws IllegalStateException when this registry does not hold the lock (never locked,
     *                               unlocked, or its lease was lost)
     */
    @Override
    public void renewLock(Object lockKey) {
        held(lockKey);
    }

    /**
     * Checks that the lock of this key is held, with a lease of this TTL. A granted lease keeps
     * the TTL it was granted with, renewed in the background; a different TTL is refused.
     *
     * @param lockKey the key
     * @param ttl     the lease time the lock was taken with ({@code lock(Duration)} or the options')
     * @throws IllegalStateException    when this registry does not hold the lock
     * @throws IllegalArgumentException naming {@code ttl} when it differs from the held lease's
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        ReactiveLocksLock lock = held(lockKey);
        if (!ttl.equals(lock.leaseTime())) {
            throw new IllegalArgumentException("ttl " + ttl + " differs from the lease time " + lock.leaseTime()
                    + " the lock '" + lockKey + "' was granted with; leases are renewed with the TTL they were granted");
        }
    }

    private ReactiveLocksLock held(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey");
        ReactiveLocksLock lock = locks.get(lockKey.toString());
        if (lock == null || !lock.isHeld()) {
            throw new IllegalStateException("Could not renew mutex at " + lockKey + ": it is not held by this registry");
        }
        return lock;
    }

    @Override
    public String toString() {
        return "ReactiveLocksLockRegistry{" + client + "}";
    }
}
