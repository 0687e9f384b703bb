package io.reactivelocks.rwlock;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.rwlock.DefaultReadWriteLock;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A distributed read-write lock: per name, any number of readers or one writer. Each grant is a
 * {@link Lease} — renewed in the background, released on cancel, complete, error and
 * {@link #close()}, expiring on its own when its holder dies — with a fencing token.
 *
 * <pre>{@code
 * ReadWriteLock rw = store.readWriteLocks(options);         // store = RedisLocks.connect(redis), EtcdLocks, ...,
 *                                                           // ReadWriteLock.create(new LocalReadWriteStore())
 * rw.withReadLock("catalog", lease -> readCatalog());       // many at once
 * rw.withWriteLock("catalog", lease -> rewriteCatalog(lease.token()));  // alone
 * }</pre>
 *
 * <p><b>Policy.</b> Writer-preferring by default: a writer that waits blocks new readers (readers
 * already in keep their grants), so writers do not starve. {@link ReadWriteLockOptions.Preference#READERS}
 * lets readers in whenever no writer holds.
 *
 * <p><b>Fencing tokens.</b> Every grant's token is greater than the token of every grant it
 * excluded: a writer's token is higher than every token of the readers before it, and every reader's
 * token is higher than the last writer's, so one resource can fence both (reject a write carrying a
 * token lower than the highest it has seen). Readers that hold together have distinct tokens on the
 * stores that count grants (in memory, Redis, PostgreSQL) and on the queue-based stores (etcd,
 * ZooKeeper) alike; a reader's token says nothing about the other readers.
 *
 * <p><b>No upgrade, not reentrant.</b> A read grant cannot become a write grant (two readers
 * upgrading would wait for each other forever), and a grant is not reentrant. Inside the body of
 * {@code withReadLock}/{@code withWriteLock} ({@code withLock}), a request for the same name in the
 * same Reactor context fails at once with {@link IllegalStateException} instead of deadlocking;
 * release the grant first.
 *
 * <p><b>Waiting.</b> While the lock is taken, {@code acquire} waits for the first of a release
 * notification (a release wakes every local waiter of the name), the earliest holder's expiry and
 * the next backoff step, then tries again, until the wait timeout
 * ({@link io.reactivelocks.LockTimeoutException}) or cancellation. Cancelling at any moment leaves
 * nothing on the store: a grant that arrives after the cancel is released, and so is a waiting
 * writer's intent.
 *
 * <p>Arguments are checked at call time: {@code null} throws {@link NullPointerException}, an
 * empty or over-long name throws {@link IllegalArgumentException}, naming the argument.
 */
public interface ReadWriteLock {

    /**
     * @param store the store that decides grants (closed by {@link #close()})
     * @return a writer-preferring lock with {@link LockOptions#defaults()}
     */
    static ReadWriteLock create(ReadWriteStore store) {
        return create(store, ReadWriteLockOptions.defaults());
    }

    /**
     * @param store   the store that decides grants (closed by {@link #close()})
     * @param options the timing and the policy
     * @return a read-write lock over {@code store}
     * @throws NullPointerException when an argument is null
     */
    static ReadWriteLock create(ReadWriteStore store, ReadWriteLockOptions options) {
        return new DefaultReadWriteLock(store, options);
    }

    /** @return the options: the timing used by the methods that take none, and the policy */
    ReadWriteLockOptions options();

    /** @return the shared side: read grants */
    Access read();

    /** @return the exclusive side: write grants */
    Access write();

    /**
     * {@code read().withLock(name, body)}: runs {@code body} under a read grant.
     *
     * @param name the lock name
     * @param body the work
     * @param <T>  the body's result type
     * @return the body's result
     */
    default <T> Mono<T> withReadLock(String name, Function<? super Lease, ? extends Mono<T>> body) {
        return read().withLock(name, body);
    }

    /**
     * {@code write().withLock(name, body)}: runs {@code body} under the write grant.
     *
     * @param name the lock name
     * @param body the work
     * @param <T>  the body's result type
     * @return the body's result
     */
    default <T> Mono<T> withWriteLock(String name, Function<? super Lease, ? extends Mono<T>> body) {
        return write().withLock(name, body);
    }

    /**
     * {@code read().hold(name)}: holds a read grant as a stream.
     *
     * @param name the lock name
     * @return the hold stream
     */
    default Flux<Lease> holdRead(String name) {
        return read().hold(name);
    }

    /**
     * {@code write().hold(name)}: holds the write grant as a stream.
     *
     * @param name the lock name
     * @return the hold stream
     */
    default Flux<Lease> holdWrite(String name) {
        return write().hold(name);
    }

    /**
     * Streams the state of a name: first the current readers, writer and waiting writers, then each
     * change (grants, releases, expiries, writers starting or ending to wait; renewals are not
     * changes). Ends when cancelled or the lock closes, or with a
     * {@link io.reactivelocks.LockBackendException}.
     *
     * @param name the lock name
     * @return the state stream
     */
    Flux<ReadWriteState> observe(String name);

    /**
     * Reads the readers and the writer once, within the request timeout.
     *
     * @param name the lock name
     * @return the current state
     */
    Mono<ReadWriteState> inspect(String name);

    /**
     * @return the live view of this lock's read and write grants held here, acquires in progress
     *         and releases the store did not confirm
     */
    io.reactivelocks.LockClientMetrics metrics();

    /**
     * Closes the lock: pending acquires fail with {@link io.reactivelocks.LockClientClosedException},
     * held grants are released (best effort), observe streams complete, the store is closed.
     * Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();

    /** One side of the lock: read ({@link #read()}) or write ({@link #write()}). */
    interface Access {

        /** @return which side this is */
        LockMode mode();

        /**
         * Acquires with the lock's default options, waiting (see {@link #acquire(String, LockOptions)}).
         *
         * @param name the lock name
         * @return a {@code Mono} of the grant's lease
         */
        default Mono<Lease> acquire(String name) {
            return acquire(name, options());
        }

        /**
         * Acquires a grant of this side, waiting as the class describes. Always release the lease,
         * or prefer {@link #withLock} / {@link #hold}. Errors:
         * {@link io.reactivelocks.LockTimeoutException}, {@link io.reactivelocks.LockBackendException},
         * {@link io.reactivelocks.LockClientClosedException}, {@link IllegalStateException} for a
         * nested request on a name this Reactor context holds. Cancel releases a late grant.
         *
         * @param name    the lock name
         * @param options options for this call
         * @return a {@code Mono} of the grant's lease
         */
        Mono<Lease> acquire(String name, LockOptions options);

        /**
         * One attempt with the default options.
         *
         * @param name the lock name
         * @return the lease, or empty when the lock is taken
         */
        default Mono<Lease> tryAcquire(String name) {
            return tryAcquire(name, options());
        }

        /**
         * One attempt, no waiting: the lease, or empty when the lock is taken (a writer's refused
         * attempt leaves no intent). Errors with {@link io.reactivelocks.LockBackendException}; cancel
         * releases a late grant.
         *
         * @param name    the lock name
         * @param options options for this call
         * @return the lease, or empty
         */
        Mono<Lease> tryAcquire(String name, LockOptions options);

        /**
         * Scoped use with the default options (see {@link #withLock(String, LockOptions, Function)}).
         *
         * @param name the lock name
         * @param body the work
         * @param <T>  the body's result type
         * @return the body's result
         */
        default <T> Mono<T> withLock(String name, Function<? super Lease, ? extends Mono<T>> body) {
            return withLock(name, options(), body);
        }

        /**
         * Scoped use: acquires, runs {@code body}, releases on complete, error and cancel. If the
         * grant is lost while the body runs, the body is cancelled and the result is
         * {@link io.reactivelocks.LockLostException}. Inside the body, another request for the same
         * name fails with {@link IllegalStateException}.
         *
         * @param name    the lock name
         * @param options options for this call
         * @param body    the work
         * @param <T>     the body's result type
         * @return the body's result
         */
        <T> Mono<T> withLock(String name, LockOptions options, Function<? super Lease, ? extends Mono<T>> body);

        /**
         * Holds a grant as a stream with the default options.
         *
         * @param name the lock name
         * @return the hold stream
         */
        default Flux<Lease> hold(String name) {
            return hold(name, options());
        }

        /**
         * Acquires (waiting), emits the lease, then an updated lease (same token, later deadline)
         * after each confirmed renewal; completes when the grant is lost. Cancelling releases it.
         *
         * @param name    the lock name
         * @param options options for this call
         * @return the hold stream
         */
        Flux<Lease> hold(String name, LockOptions options);

        /** @return the lock's default timing options */
        LockOptions options();
    }
}
