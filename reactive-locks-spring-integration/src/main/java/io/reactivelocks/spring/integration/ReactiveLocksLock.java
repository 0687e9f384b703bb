package io.reactivelocks.spring.integration;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The lock of one key of a {@link ReactiveLocksLockRegistry}: a thread-owned, reentrant
 * {@link java.util.concurrent.locks.Lock} in the process, backed by a {@link Lease} on the store
 * while held. The first hold of a thread takes the lease; nested holds only count; the last
 * {@link #unlock()} releases it. The lease is renewed in the background.
 *
 * <p>Fencing and loss: {@link #lease()} is the lease held now — pass its {@link Lease#token()}
 * (or {@link #token()}) to the resource you write, which rejects smaller tokens, and watch
 * {@link Lease#lost()} or {@link #isHeld()}. A lock whose lease was lost stays owned by its thread
 * until {@link #unlock()}, which then throws {@link ConcurrentModificationException}, as Spring
 * Integration's Redis and JDBC registries do when the store expired the lock.
 *
 * <p>Every method blocks the calling thread and refuses to run on a Reactor non-blocking thread
 * with {@link IllegalStateException}. Store failures while acquiring are
 * {@link CannotAcquireLockException}s carrying the {@link LockException} as cause.
 */
public final class ReactiveLocksLock implements DistributedLock {

    private final LockClient client;
    private final LockOptions options;
    private final String name;
    private final Duration blockBound;
    private final ReentrantLock local = new ReentrantLock();
    private volatile @Nullable Lease lease;
    private volatile Duration leaseTime;
    private volatile long lockedAtMillis = System.currentTimeMillis();

    ReactiveLocksLock(LockClient client, LockOptions options, String name) {
        this.client = client;
        this.options = options;
        this.name = name;
        this.leaseTime = options.leaseTime();
        this.blockBound = options.requestTimeout().plusSeconds(1);
    }

    /** @return the lock name on the store */
    public String name() {
        return name;
    }

    /**
     * @return the lease held now (by whichever thread of this process owns the lock), or
     *         {@code null} when the lock is not held; it stays the same lease through nested holds
     */
    public @Nullable Lease lease() {
        return lease;
    }

    /**
     * @return the fencing token of the lease held now
     * @throws IllegalStateException when the lock is not held
     */
    public long token() {
        Lease held = lease;
        if (held == null) {
            throw new IllegalStateException("The lock '" + name + "' is not held");
        }
        return held.token();
    }

    /** @return {@code true} while the lock is held in this process and its lease is valid (not lost, not expired) */
    public boolean isHeld() {
        Lease held = lease;
        return held != null && held.isValid();
    }

    /** @return {@code true} while a thread of this process owns the lock (even if its lease was lost) */
    public boolean isAcquiredInThisProcess() {
        return local.isLocked();
    }

    /**
     * Acquires the lock with the registry's lease time, waiting as long as it takes;
     * uninterruptible, as {@link java.util.concurrent.locks.Lock#lock()} is (an interrupt is kept
     * for later).
     *
     * @throws CannotAcquireLockException when the store fails permanently
     */
    @Override
    public void lock() {
        lock(options.leaseTime());
    }

    /**
     * Acquires the lock with a lease of this TTL, waiting as long as it takes; uninterruptible.
     * Stores that renew by session (etcd, ZooKeeper) refuse a TTL other than the client's
     * default.
     *
     * @param ttl the lease time of the grant, renewed while held
     * @throws CannotAcquireLockException when the store fails permanently
     */
    @Override
    public void lock(Duration ttl) {
        LockOptions acquire = options(ttl, null);
        checkBlockingAllowed();
        local.lock();
        if (local.getHoldCount() > 1) {
            return;
        }
        boolean interrupted = false;
        try {
            CompletableFuture<Lease> pending = client.acquire(name, acquire).toFuture();
            while (true) {
                try {
                    granted(pending.get(), ttl);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (ExecutionException e) {
            local.unlock();
            throw cannotAcquire(e.getCause());
        } catch (RuntimeException e) {
            local.unlock();
            throw e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Acquires the lock, waiting as long as it takes unless the thread is interrupted: then the
     * waiting acquire is cancelled (a grant that arrives later is released, nothing stays on the
     * store) and {@link InterruptedException} is thrown.
     *
     * @throws InterruptedException       when interrupted before the lock was granted
     * @throws CannotAcquireLockException when the store fails permanently
     */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        checkBlockingAllowed();
        local.lockInterruptibly();
        if (local.getHoldCount() > 1) {
            return;
        }
        Lease granted;
        try {
            granted = await(client.acquire(name, options(options.leaseTime(), null)), null);
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
        granted(granted, options.leaseTime());
    }

    /**
     * One attempt, no waiting for another holder: blocks only until the store answered.
     *
     * @return {@code true} when the lock is now held by the calling thread
     * @throws CannotAcquireLockException when the store fails or does not answer in time
     */
    @Override
    public boolean tryLock() {
        try {
            return tryLock(Duration.ZERO, options.leaseTime());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Waits at most {@code time} for the lock (see {@link #tryLock(Duration, Duration)}).
     *
     * @param time how long to wait
     * @param unit the unit of {@code time}
     * @return {@code true} when the lock is now held by the calling thread
     * @throws InterruptedException when interrupted while waiting (nothing stays on the store)
     */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        // toNanos saturates at Long.MAX_VALUE (292 years); tryLock(Duration, ..) caps that at LockOptions.MAX_DURATION
        return tryLock(Duration.ofNanos(unit.toNanos(Math.max(0, time))), options.leaseTime());
    }

    /**
     * Waits at most {@code waitTime} for the lock — first for the thread that holds it in this
     * process, then on the store — and takes it with a lease of this TTL.
     *
     * @param waitTime how long to wait; zero for one attempt
     * @param ttl      the lease time of the grant, renewed while held
     * @return {@code true} when the lock is now held by the calling thread, {@code false} when
     *         the wait time passed
     * @throws InterruptedException       when interrupted while waiting (the waiting acquire is
     *                                    cancelled; nothing stays on the store)
     * @throws CannotAcquireLockException when the store fails permanently or does not answer
     */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        if (waitTime.isNegative()) {
            throw new IllegalArgumentException("waitTime must not be negative: " + waitTime);
        }
        if (waitTime.compareTo(LockOptions.MAX_DURATION) > 0) {
            waitTime = LockOptions.MAX_DURATION;
        }
        checkBlockingAllowed();
        long deadline = System.nanoTime() + waitTime.toNanos();
        if (!local.tryLock(waitTime.toNanos(), TimeUnit.NANOSECONDS)) {
            return false;
        }
        if (local.getHoldCount() > 1) {
            return true;
        }
        Lease granted;
        try {
            long remaining = deadline - System.nanoTime();
            Mono<Lease> attempt = remaining <= 0
                    ? client.tryAcquire(name, options(ttl, null))
                    : client.acquire(name, options(ttl, Duration.ofNanos(remaining)))
                            .onErrorResume(LockTimeoutException.class, e -> Mono.empty());
            granted = await(attempt, Duration.ofNanos(Math.max(0, remaining)).plus(blockBound));
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
        if (granted == null) {
            local.unlock();
            return false;
        }
        granted(granted, ttl);
        return true;
    }

    /**
     * Releases one hold of the calling thread; the last one releases the lease on the store
     * (blocking until the store answered, at most the request timeout plus a second).
     *
     * @throws IllegalStateException            when the calling thread does not own the lock
     * @throws ConcurrentModificationException  when the lease had been lost before this unlock:
     *                                          another owner may have held the lock meanwhile (the
     *                                          lock is unlocked in the process all the same)
     * @throws io.reactivelocks.LockBackendException when the release could not reach the store;
     *                                          the lock then ends by its lease TTL
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalStateException("You do not own lock at " + name);
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        Lease held = lease;
        lease = null;
        try {
            if (held == null) {
                return;
            }
            boolean wasValid = held.isValid();
            checkBlockingAllowed();
            held.release().block(blockBound);
            if (!wasValid) {
                throw new ConcurrentModificationException("The lease of lock '" + name + "' was lost in the store before "
                        + "unlock (not renewed in time, or taken over). The integrity of data protected by this lock may "
                        + "have been compromised; fencing token " + held.token() + " is stale.");
            }
        } finally {
            local.unlock();
        }
    }

    /**
     * Not supported, as in Spring Integration's distributed registries.
     *
     * @return never
     * @throws UnsupportedOperationException always
     */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported");
    }

    /** @return the lease time of the lease held now, or the registry's when not held */
    Duration leaseTime() {
        return leaseTime;
    }

    long lockedAtMillis() {
        return lockedAtMillis;
    }

    private void granted(Lease granted, Duration ttl) {
        leaseTime = ttl;
        lockedAtMillis = System.currentTimeMillis();
        lease = granted;
    }

    private LockOptions options(Duration ttl, @Nullable Duration waitTimeout) {
        Objects.requireNonNull(ttl, "ttl");
        LockOptions.Builder b = options.mutate().waitTimeout(waitTimeout);
        if (!ttl.equals(options.leaseTime())) {
            b.leaseTime(ttl);
        }
        return b.build();
    }

    /**
     * Waits for the acquire on the calling thread; an interrupt or the bound cancels it, which
     * releases a grant that arrives later.
     */
    private @Nullable Lease await(Mono<Lease> acquire, @Nullable Duration bound) throws InterruptedException {
        CompletableFuture<Lease> pending = acquire.toFuture();
        try {
            return bound == null ? pending.get() : pending.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            pending.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            throw cannotAcquire(e.getCause());
        } catch (TimeoutException e) {
            pending.cancel(true);
            throw new CannotAcquireLockException("The store did not answer within " + bound + " for lock '" + name + "'", e);
        }
    }

    private RuntimeException cannotAcquire(Throwable cause) {
        if (cause instanceof LockException) {
            return new CannotAcquireLockException("Failed to lock mutex at " + name + ": " + cause.getMessage(), cause);
        }
        if (cause instanceof RuntimeException runtime) {
            return runtime;
        }
        return new CannotAcquireLockException("Failed to lock mutex at " + name, cause);
    }

    private static void checkBlockingAllowed() {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("java.util.concurrent.locks.Lock blocks; do not use it on the non-blocking thread "
                    + Thread.currentThread().getName());
        }
    }

    @Override
    public String toString() {
        Lease held = lease;
        return "ReactiveLocksLock{" + name + (held == null ? ", free in this process" : ", token=" + held.token()) + "}";
    }
}
