package io.reactivelocks.vertx;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.rwlock.ReadWriteState;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The {@link ReadWriteLock} API for Vert.x: shared readers or one writer per name, as futures and
 * {@link LockStream}s completed on the caller's context (the current one when the method is called,
 * or the one bound with {@link #on(Context)}), over the lock's own engine. Each grant is a fenced
 * {@link Lease}, renewed in the background and released on completion, failure and cancel.
 *
 * <pre>{@code
 * VertxReadWriteLock catalog = VertxReadWriteLock.create(vertx, store.readWriteLocks(LockOptions.defaults()));
 * catalog.withReadLock("catalog", lease -> readCatalog());            // many readers at once
 * catalog.withWriteLock("catalog", lease -> rebuild(lease.token()));  // one writer, no reader
 * }</pre>
 *
 * <p>Arguments are checked at call time as on {@link ReadWriteLock}; failures fail the future with
 * the {@link io.reactivelocks.LockException} family. A waiting {@code acquire} ends at the wait
 * timeout of its options; a {@code hold} can be cancelled at any time.
 */
public final class VertxReadWriteLock {

    private final ReadWriteLock lock;
    private final CallerContext context;
    private final Access read;
    private final Access write;

    VertxReadWriteLock(ReadWriteLock lock, CallerContext context) {
        this.lock = lock;
        this.context = context;
        this.read = new Access(lock.read(), context);
        this.write = new Access(lock.write(), context);
    }

    /**
     * @param vertx the Vert.x instance whose contexts receive the results
     * @param lock  the read-write lock to use (closed only by {@link #close()})
     * @return the Vert.x view of {@code lock}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxReadWriteLock create(Vertx vertx, ReadWriteLock lock) {
        Objects.requireNonNull(lock, "lock");
        return new VertxReadWriteLock(lock, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view; it must belong
     *                to this object's Vert.x
     * @return a view of the same lock bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxReadWriteLock on(Context context) {
        return new VertxReadWriteLock(lock, this.context.on(context));
    }

    /** @return the read-write lock behind this view (for its Reactor API) */
    public ReadWriteLock readWriteLock() {
        return lock;
    }

    /** @return the lock's options (timing, and whether readers or writers go first), as {@link ReadWriteLock#options()} */
    public ReadWriteLockOptions options() {
        return lock.options();
    }

    /** @return shared (read) access, as {@link ReadWriteLock#read()} */
    public Access read() {
        return read;
    }

    /** @return exclusive (write) access, as {@link ReadWriteLock#write()} */
    public Access write() {
        return write;
    }

    /**
     * Runs {@code body} under a read lock with the default options, as {@link Access#withLock(String, Function)}.
     *
     * @param name the lock name
     * @param body the work to do while reading: returns a Vert.x future
     * @param <T>  the body's result type
     * @return a future of the body's result, on the caller's context
     */
    public <T> Future<@Nullable T> withReadLock(String name, Function<? super Lease, ? extends Future<T>> body) {
        return read.withLock(name, body);
    }

    /**
     * Runs {@code body} under the write lock with the default options, as {@link Access#withLock(String, Function)}.
     *
     * @param name the lock name
     * @param body the work to do while writing: returns a Vert.x future
     * @param <T>  the body's result type
     * @return a future of the body's result, on the caller's context
     */
    public <T> Future<@Nullable T> withWriteLock(String name, Function<? super Lease, ? extends Future<T>> body) {
        return write.withLock(name, body);
    }

    /**
     * Holds a read lock as a stream with the default options, as {@link Access#hold(String)}.
     *
     * @param name the lock name
     * @return the hold stream; nothing happens before a handler is set
     */
    public LockStream<Lease> holdRead(String name) {
        return read.hold(name);
    }

    /**
     * Holds the write lock as a stream with the default options, as {@link Access#hold(String)}.
     *
     * @param name the lock name
     * @return the hold stream; nothing happens before a handler is set
     */
    public LockStream<Lease> holdWrite(String name) {
        return write.hold(name);
    }

    /**
     * Reads the readers, the writer and the waiting writers once, as {@link ReadWriteLock#inspect(String)}.
     *
     * @param name the lock name
     * @return a future of the state; failed with {@link io.reactivelocks.LockBackendException}
     */
    public Future<ReadWriteState> inspect(String name) {
        return context.future(lock.inspect(name));
    }

    /** @return the lock's live view (grants held here, acquires in progress), as {@link ReadWriteLock#metrics()} */
    public io.reactivelocks.LockClientMetrics metrics() {
        return lock.metrics();
    }

    /**
     * Streams the readers, the writer and the waiting writers, as {@link ReadWriteLock#observe(String)}.
     *
     * @param name the lock name
     * @return the state stream on the caller's context
     */
    public LockStream<ReadWriteState> observe(String name) {
        return context.stream(lock.observe(name));
    }

    /**
     * Releases a read or write lease, as {@link Lease#release()}.
     *
     * @param lease the lease to release
     * @return a future completed on the caller's context when the store confirmed
     * @throws NullPointerException naming {@code lease} when it is null
     */
    public Future<Void> release(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return context.future(lease.release());
    }

    /**
     * Closes the lock, as {@link ReadWriteLock#close()}: pending acquires fail, held leases are released.
     *
     * @return a future completed on the caller's context when it is closed
     */
    public Future<Void> close() {
        return context.future(lock.close());
    }

    /**
     * One side of the lock (read or write) for Vert.x, as {@link ReadWriteLock.Access}: the same
     * verbs as {@link VertxLocks}, completed on the caller's context of the lock it came from.
     */
    public static final class Access {

        private final ReadWriteLock.Access access;
        private final CallerContext context;

        Access(ReadWriteLock.Access access, CallerContext context) {
            this.access = access;
            this.context = context;
        }

        /** @return {@link LockMode#READ} or {@link LockMode#WRITE} */
        public LockMode mode() {
            return access.mode();
        }

        /** @return the default options of this side's calls, as {@link ReadWriteLock.Access#options()} */
        public LockOptions options() {
            return access.options();
        }

        /**
         * Acquires with the default options (see {@link #acquire(String, LockOptions)}).
         *
         * @param name the lock name
         * @return a future of the lease
         */
        public Future<Lease> acquire(String name) {
            return acquire(name, access.options());
        }

        /**
         * Acquires this side, waiting without a thread until granted or the options' wait timeout.
         * Always release the lease ({@link VertxReadWriteLock#release(Lease)}), or prefer
         * {@link #withLock} / {@link #hold}.
         *
         * @param name    the lock name
         * @param options options for this call
         * @return a future of the lease, completed on the caller's context; failed with
         *         {@link io.reactivelocks.LockTimeoutException} or {@link io.reactivelocks.LockBackendException}
         */
        public Future<Lease> acquire(String name, LockOptions options) {
            return context.future(access.acquire(name, options));
        }

        /**
         * One attempt with the default options (see {@link #tryAcquire(String, LockOptions)}).
         *
         * @param name the lock name
         * @return a future of the lease, or of {@code null} when the lock is not available
         */
        public Future<@Nullable Lease> tryAcquire(String name) {
            return tryAcquire(name, access.options());
        }

        /**
         * One attempt, no waiting.
         *
         * @param name    the lock name
         * @param options options for this call
         * @return a future of the lease, or of {@code null} when the lock is not available
         */
        public Future<@Nullable Lease> tryAcquire(String name, LockOptions options) {
            return context.future(access.tryAcquire(name, options));
        }

        /**
         * Runs {@code body} under this side with the default options (see {@link #withLock(String, LockOptions, Function)}).
         *
         * @param name the lock name
         * @param body the work: returns a Vert.x future
         * @param <T>  the body's result type
         * @return a future of the body's result
         */
        public <T> Future<@Nullable T> withLock(String name, Function<? super Lease, ? extends Future<T>> body) {
            return withLock(name, access.options(), body);
        }

        /**
         * Scoped use: acquires, calls {@code body} on the caller's context, releases when the body's
         * future completes or fails. A loss meanwhile fails the result with {@link io.reactivelocks.LockLostException}.
         *
         * @param name    the lock name
         * @param options options for this call
         * @param body    the work: returns a Vert.x future
         * @param <T>     the body's result type
         * @return a future of the body's result, completed on the caller's context after the release was attempted
         * @throws NullPointerException naming {@code body} when it is null
         */
        public <T> Future<@Nullable T> withLock(String name, LockOptions options,
                                                Function<? super Lease, ? extends Future<T>> body) {
            Objects.requireNonNull(body, "body");
            Context ctx = context.get();
            return ContextBridge.toFuture(
                    access.withLock(name, options, lease -> ContextBridge.toMono(() -> body.apply(lease), ctx)), ctx);
        }

        /**
         * Holds this side as a stream with the default options (see {@link #hold(String, LockOptions)}).
         *
         * @param name the lock name
         * @return the hold stream; nothing happens before a handler is set
         */
        public LockStream<Lease> hold(String name) {
            return hold(name, access.options());
        }

        /**
         * Holds this side as a stream: setting a handler acquires, the handler receives the lease
         * after the grant and after each renewal, and the stream ends when the lease is lost.
         * {@link LockStream#cancel()} releases, or leaves the line while waiting.
         *
         * @param name    the lock name
         * @param options options for this call
         * @return the hold stream on the caller's context
         */
        public LockStream<Lease> hold(String name, LockOptions options) {
            return ContextBridge.toStream(access.hold(name, options), context.get(), Lease::release);
        }
    }
}
