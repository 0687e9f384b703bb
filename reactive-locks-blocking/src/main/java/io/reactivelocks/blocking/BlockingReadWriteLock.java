package io.reactivelocks.blocking;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.rwlock.ReadWriteState;
import java.util.Objects;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * A blocking view of a distributed {@link ReadWriteLock}: any number of readers or one writer per
 * name, for code on (virtual) threads. Waiting, interruption (= cancellation,
 * {@link InterruptedException}), errors and the refusal on Reactor non-blocking threads are as
 * described on {@link BlockingLocks}.
 *
 * <pre>{@code
 * BlockingReadWriteLock catalog = BlockingReadWriteLock.of(store.readWriteLocks(LockOptions.defaults()));
 * Catalog c = catalog.withReadLock("catalog", lease -> readCatalog());
 * catalog.withWriteLock("catalog", lease -> rewriteCatalog(lease.token()));
 * }</pre>
 *
 * <p><b>Not reentrant, no upgrade</b> (as the core lock): a {@code withLock} or {@code acquire} of
 * either side on a name that a {@code withLock} of this lock holds on the calling thread throws
 * {@link IllegalStateException} at once instead of waiting for itself.
 */
public final class BlockingReadWriteLock implements AutoCloseable {

    private final ReadWriteLock lock;
    private final Access read;
    private final Access write;

    private BlockingReadWriteLock(ReadWriteLock lock) {
        this.lock = lock;
        this.read = new Access(lock, lock.read());
        this.write = new Access(lock, lock.write());
    }

    /**
     * @param lock the reactive read-write lock whose engine does the work
     * @return a blocking view of it; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code lock} when it is null
     */
    public static BlockingReadWriteLock of(ReadWriteLock lock) {
        return new BlockingReadWriteLock(Objects.requireNonNull(lock, "lock"));
    }

    /** @return the reactive read-write lock underneath */
    public ReadWriteLock readWriteLock() {
        return lock;
    }

    /** @return the options: the timing used by the methods that take none, and the policy */
    public ReadWriteLockOptions options() {
        return lock.options();
    }

    /** @return the shared side: read grants */
    public Access read() {
        return read;
    }

    /** @return the exclusive side: write grants */
    public Access write() {
        return write;
    }

    /**
     * {@code read().withLock(name, body)}: runs {@code body} under a read grant.
     *
     * @param name the lock name
     * @param body the work, on the calling thread
     * @param <T>  the result type
     * @param <E>  the checked exception the body may throw
     * @return the body's result
     * @throws E                    the body's own exception, unchanged
     * @throws InterruptedException when interrupted while waiting (the body did not run)
     */
    public <T, E extends Exception> T withReadLock(String name, LeaseBody<T, E> body) throws E, InterruptedException {
        return read.withLock(name, body);
    }

    /**
     * {@code write().withLock(name, body)}: runs {@code body} under the write grant.
     *
     * @param name the lock name
     * @param body the work, on the calling thread
     * @param <T>  the result type
     * @param <E>  the checked exception the body may throw
     * @return the body's result
     * @throws E                    the body's own exception, unchanged
     * @throws InterruptedException when interrupted while waiting (the body did not run)
     */
    public <T, E extends Exception> T withWriteLock(String name, LeaseBody<T, E> body) throws E, InterruptedException {
        return write.withLock(name, body);
    }

    /**
     * {@code read().hold(name, body)}: holds a read grant, calling {@code body} after each renewal.
     *
     * @param name the lock name
     * @param body called with the lease, then after each renewal; {@code false} to release and return
     * @param <E>  the checked exception the body may throw
     * @throws E                    the body's own exception (the grant is released)
     * @throws InterruptedException when interrupted: the grant is released
     */
    public <E extends Exception> void holdRead(String name, StreamBody<? super BlockingLease, E> body)
            throws E, InterruptedException {
        read.hold(name, body);
    }

    /**
     * {@code write().hold(name, body)}: holds the write grant, calling {@code body} after each renewal.
     *
     * @param name the lock name
     * @param body called with the lease, then after each renewal; {@code false} to release and return
     * @param <E>  the checked exception the body may throw
     * @throws E                    the body's own exception (the grant is released)
     * @throws InterruptedException when interrupted: the grant is released
     */
    public <E extends Exception> void holdWrite(String name, StreamBody<? super BlockingLease, E> body)
            throws E, InterruptedException {
        write.hold(name, body);
    }

    /**
     * Reads the readers and the writer of a name once (see {@link ReadWriteLock#inspect}).
     *
     * @param name the lock name
     * @return the current state
     * @throws InterruptedException  when interrupted while waiting for the store
     * @throws LockBackendException  when the store cannot be read within the request timeout
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ReadWriteState inspect(String name) throws InterruptedException {
        var inspect = lock.inspect(name);
        Await.refuseNonBlocking("BlockingReadWriteLock.inspect");
        return Objects.requireNonNull(Await.interruptibly(inspect, "inspect", s -> { }), "inspect completed empty");
    }

    /** @return the lock's live view: the read and write grants held here and the acquires in progress */
    public io.reactivelocks.LockClientMetrics metrics() {
        return lock.metrics();
    }

    /**
     * Follows the state of a name (see {@link ReadWriteLock#observe}): calls {@code body} with the
     * current readers, writer and waiting writers, then with each change, until it returns
     * {@code false} or throws, the thread is interrupted, or the lock closes.
     *
     * @param name the lock name
     * @param body called with each state; {@code false} to stop
     * @param <E>  the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted while waiting for a change
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void observe(String name, StreamBody<? super ReadWriteState, E> body)
            throws E, InterruptedException {
        var states = lock.observe(name);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingReadWriteLock.observe");
        Await.each(states, "observe", false, body, null, null);
    }

    /** Closes the lock underneath (see {@link ReadWriteLock#close}); idempotent, not interruptible. */
    @Override
    public void close() {
        Await.closing(lock.close(), "BlockingReadWriteLock.close");
    }

    /** @return a description naming the lock */
    @Override
    public String toString() {
        return "BlockingReadWriteLock[" + lock + "]";
    }

    /** One side of the lock, blocking: read ({@link #read()}) or write ({@link #write()}). */
    public static final class Access {

        private final ReadWriteLock lock;
        private final ReadWriteLock.Access access;

        private Access(ReadWriteLock lock, ReadWriteLock.Access access) {
            this.lock = lock;
            this.access = access;
        }

        /** @return which side this is */
        public LockMode mode() {
            return access.mode();
        }

        /** @return the lock's default timing options */
        public LockOptions options() {
            return access.options();
        }

        /**
         * Acquires a grant of this side with the default options.
         *
         * @param name the lock name
         * @return the grant's lease; release it (try-with-resources)
         * @throws InterruptedException when interrupted while waiting: nothing is left held
         */
        public BlockingLease acquire(String name) throws InterruptedException {
            return acquire(name, access.options());
        }

        /**
         * Acquires a grant of this side, waiting like {@link ReadWriteLock.Access#acquire(String, LockOptions)}.
         *
         * @param name    the lock name
         * @param options options for this call
         * @return the grant's lease, renewed until released
         * @throws InterruptedException  when interrupted while waiting: a grant in flight is released
         * @throws LockTimeoutException  after the wait timeout
         * @throws LockBackendException  when the store fails
         * @throws IllegalStateException when a {@code withLock} of this lock holds {@code name} on this
         *                               thread, or when called on a Reactor non-blocking thread
         */
        public BlockingLease acquire(String name, LockOptions options) throws InterruptedException {
            Mono<Lease> acquire = access.acquire(name, options);
            refuseNested(name);
            Await.refuseNonBlocking("BlockingReadWriteLock.acquire");
            Lease lease = Await.interruptibly(acquire, "acquire", Await::releaseOrphan);
            return new BlockingLease(Objects.requireNonNull(lease, "the engine's acquire completed without a lease"));
        }

        /**
         * One attempt with the default options.
         *
         * @param name the lock name
         * @return the lease, or empty when the lock is taken
         * @throws InterruptedException when interrupted while the attempt is in flight
         */
        public Optional<BlockingLease> tryAcquire(String name) throws InterruptedException {
            return tryAcquire(name, access.options());
        }

        /**
         * One attempt, no waiting: the lease, or empty when the lock is taken.
         *
         * @param name    the lock name
         * @param options options for this call
         * @return the lease, or empty
         * @throws InterruptedException  when interrupted while the attempt is in flight: a late grant is released
         * @throws LockBackendException  when the store fails
         * @throws IllegalStateException when called on a Reactor non-blocking thread
         */
        public Optional<BlockingLease> tryAcquire(String name, LockOptions options) throws InterruptedException {
            Mono<Lease> attempt = access.tryAcquire(name, options);
            Await.refuseNonBlocking("BlockingReadWriteLock.tryAcquire");
            return Optional.ofNullable(Await.interruptibly(attempt, "tryAcquire", Await::releaseOrphan)).map(BlockingLease::new);
        }

        /**
         * Scoped use with the default options (see {@link #withLock(String, LockOptions, LeaseBody)}).
         *
         * @param name the lock name
         * @param body the work, on the calling thread
         * @param <T>  the result type
         * @param <E>  the checked exception the body may throw
         * @return the body's result
         * @throws E                    the body's own exception, unchanged
         * @throws InterruptedException when interrupted while waiting (the body did not run)
         */
        public <T, E extends Exception> T withLock(String name, LeaseBody<T, E> body) throws E, InterruptedException {
            return withLock(name, access.options(), body);
        }

        /**
         * Scoped use: acquires a grant of this side, runs {@code body} on the calling thread and
         * releases when it ends. A grant lost while the body runs interrupts this thread, and the
         * call then throws {@link LockLostException} (the body's own exception suppressed).
         *
         * @param name    the lock name
         * @param options options for this call
         * @param body    the work, on the calling thread
         * @param <T>     the result type
         * @param <E>     the checked exception the body may throw
         * @return the body's result
         * @throws E                     the body's own exception, unchanged
         * @throws InterruptedException  when interrupted while waiting: nothing is left held
         * @throws LockLostException     when the grant was lost before the body ended
         * @throws LockTimeoutException  after the wait timeout
         * @throws LockBackendException  when the store fails
         * @throws IllegalStateException when a {@code withLock} of this lock holds {@code name} on this
         *                               thread (no reentrancy, no upgrade), or on a Reactor non-blocking thread
         */
        public <T, E extends Exception> T withLock(String name, LockOptions options, LeaseBody<T, E> body)
                throws E, InterruptedException {
            Objects.requireNonNull(body, "body");
            refuseNested(name);
            Await.refuseNonBlocking("BlockingReadWriteLock.withLock");
            return CallerScope.<Lease, T, E>run(b -> access.withLock(name, options, b), lease -> {
                BlockingLease held = new BlockingLease(lease);
                HeldOnThread.push(lock, name, held);
                try {
                    return body.apply(held);
                } finally {
                    HeldOnThread.pop();
                }
            }, "withLock");
        }

        /**
         * Holds a grant with the default options (see {@link #hold(String, LockOptions, StreamBody)}).
         *
         * @param name the lock name
         * @param body called with the lease, then after each renewal; {@code false} to release and return
         * @param <E>  the checked exception the body may throw
         * @throws E                    the body's own exception (the grant is released)
         * @throws InterruptedException when interrupted: the grant is released
         */
        public <E extends Exception> void hold(String name, StreamBody<? super BlockingLease, E> body)
                throws E, InterruptedException {
            hold(name, access.options(), body);
        }

        /**
         * Holds a grant of this side as {@link ReadWriteLock.Access#hold} does, on the calling
         * thread: calls {@code body} with the lease, then after each confirmed renewal; returns when
         * the grant is lost. When the body returns {@code false} or throws, or the thread is
         * interrupted, the grant is released before the call returns.
         *
         * @param name    the lock name
         * @param options options for this call
         * @param body    called with the lease, then after each renewal; {@code false} to release and return
         * @param <E>     the checked exception the body may throw
         * @throws E                     the body's own exception, unchanged
         * @throws InterruptedException  when interrupted: the grant is released
         * @throws LockTimeoutException  after the wait timeout
         * @throws LockBackendException  when the store fails
         * @throws IllegalStateException when called on a Reactor non-blocking thread
         */
        public <E extends Exception> void hold(String name, LockOptions options, StreamBody<? super BlockingLease, E> body)
                throws E, InterruptedException {
            var hold = access.hold(name, options).map(BlockingLease::new);
            Objects.requireNonNull(body, "body");
            Await.refuseNonBlocking("BlockingReadWriteLock.hold");
            Await.each(hold, "hold", false, body, BlockingLease::release, null);
        }

        private void refuseNested(String name) {
            if (HeldOnThread.find(lock, name) != null) {
                throw new IllegalStateException("'" + name + "' is held on this thread by a withLock of this read-write lock:"
                        + " a read-write grant is not reentrant and cannot be upgraded; release it first");
            }
        }

        /** @return the side and the lock */
        @Override
        public String toString() {
            return "BlockingReadWriteLock.Access[" + access.mode() + ", " + lock + "]";
        }
    }
}
