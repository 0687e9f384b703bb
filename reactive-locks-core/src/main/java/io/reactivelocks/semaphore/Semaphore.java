package io.reactivelocks.semaphore;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.semaphore.DefaultSemaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A distributed semaphore: at most {@code permits} (N) holders of a name at once. Each acquired
 * permit is a {@link Lease} — renewed in the background like a lock, with its own fencing token
 * (strictly greater than every earlier token of the name), released on cancel, complete, error
 * and {@link #close()}, and expiring on its own when its holder dies.
 *
 * <pre>{@code
 * Semaphore pool = store.semaphores(options);             // store = RedisLocks.connect(redis), EtcdLocks, ...,
 *                                                         // Semaphore.create(new LocalSemaphoreStore())
 * pool.withPermit("exports", 4, permit -> runExport(permit.token()))   // at most 4 exports at once
 *     .subscribe();
 * }</pre>
 *
 * <p><b>N is given per call</b> and checked by the store at the time of each grant: a grant needs
 * fewer than N unexpired holders (N − k + 1 for k permits at once). Callers that pass different N
 * for one name each get their own bound at grant time; lowering N never revokes permits already
 * out — it only stops new grants until enough holders are gone.
 *
 * <p><b>Waiting.</b> While no permit is free, {@code acquire} waits for the first of a release
 * notification (one local waiter is woken per release, not all), the earliest holder's expiry and
 * the next backoff step of the options, then tries again, until the wait timeout
 * ({@link io.reactivelocks.LockTimeoutException}) or cancellation. Cancelling at any moment leaves
 * nothing held: a grant that arrives after the cancel is released.
 *
 * <p>Arguments are checked at call time: {@code null} throws {@link NullPointerException}, an
 * empty or over-long name, {@code permits < 1} or a count outside {@code [1, permits]} throws
 * {@link IllegalArgumentException}, naming the argument.
 */
public interface Semaphore {

    /** The largest N accepted. */
    int MAX_PERMITS = 1_000_000;

    /**
     * @param store the store that decides grants (closed by {@link #close()})
     * @return a semaphore with {@link LockOptions#defaults()}
     */
    static Semaphore create(SemaphoreStore store) {
        return create(store, LockOptions.defaults());
    }

    /**
     * @param store   the store that decides grants (closed by {@link #close()})
     * @param options the default lease time, renewal, wait timeout, backoff, request timeout,
     *                drift allowance, clock and scheduler
     * @return a semaphore over {@code store}
     * @throws NullPointerException when an argument is null
     */
    static Semaphore create(SemaphoreStore store, LockOptions options) {
        return new DefaultSemaphore(store, options);
    }

    /** @return the options used by the methods that take none */
    LockOptions options();

    /**
     * Acquires one permit, waiting as long as the default options say.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @return a {@code Mono} of the permit's lease
     */
    default Mono<Lease> acquire(String name, int permits) {
        return acquire(name, permits, options());
    }

    /**
     * Acquires one permit with options for this call (as {@link io.reactivelocks.LockClient#acquire(String, LockOptions)}).
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return a {@code Mono} of the permit's lease
     */
    default Mono<Lease> acquire(String name, int permits, LockOptions options) {
        return acquire(name, permits, 1, options).map(l -> l.get(0));
    }

    /**
     * Acquires {@code count} permits at once (atomically: all or none, so two callers asking for
     * several cannot each hold a part and wait for the other), waiting like the class describes.
     * Stores that queue natively (etcd, ZooKeeper) put the {@code count} permits in line as one unit
     * and take at most 65,535 at once (more fails with a {@link io.reactivelocks.LockBackendException}
     * caused by an {@link IllegalArgumentException}).
     * Always release the leases, or prefer {@link #withPermit} / {@link #hold}. Errors:
     * {@link io.reactivelocks.LockTimeoutException}, {@link io.reactivelocks.LockBackendException},
     * {@link io.reactivelocks.LockClientClosedException}.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param count   how many permits, from 1 to {@code permits}
     * @param options options for this call
     * @return a {@code Mono} of one lease per permit
     */
    Mono<List<Lease>> acquire(String name, int permits, int count, LockOptions options);

    /**
     * One attempt for one permit, no waiting.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @return the permit's lease, or empty when none is free
     */
    default Mono<Lease> tryAcquire(String name, int permits) {
        return tryAcquire(name, permits, options());
    }

    /**
     * One attempt for one permit with options for this call, no waiting.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return the permit's lease, or empty when none is free
     */
    default Mono<Lease> tryAcquire(String name, int permits, LockOptions options) {
        return tryAcquire(name, permits, 1, options).map(l -> l.get(0));
    }

    /**
     * One attempt for {@code count} permits at once: emits one lease per permit, or completes empty
     * when not enough are free. Errors with {@link io.reactivelocks.LockBackendException}; cancel
     * releases a late grant.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param count   how many permits, from 1 to {@code permits}
     * @param options options for this call
     * @return the leases, or empty
     */
    Mono<List<Lease>> tryAcquire(String name, int permits, int count, LockOptions options);

    /**
     * Runs {@code body} under one permit with the default options (see
     * {@link #withPermit(String, int, LockOptions, Function)}).
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param body    the work to do while holding the permit
     * @param <T>     the body's result type
     * @return the body's result
     */
    default <T> Mono<T> withPermit(String name, int permits, Function<? super Lease, ? extends Mono<T>> body) {
        return withPermit(name, permits, options(), body);
    }

    /**
     * Scoped use: acquires one permit, runs {@code body}, releases on complete, error and cancel.
     * If the permit is lost while the body runs, the body is cancelled and the result is
     * {@link io.reactivelocks.LockLostException}.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @param body    the work to do while holding the permit
     * @param <T>     the body's result type
     * @return the body's result
     */
    <T> Mono<T> withPermit(String name, int permits, LockOptions options, Function<? super Lease, ? extends Mono<T>> body);

    /**
     * Holds one permit as a stream with the default options (see {@link #hold(String, int, LockOptions)}).
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @return the hold stream
     */
    default Flux<Lease> hold(String name, int permits) {
        return hold(name, permits, options());
    }

    /**
     * Acquires one permit (waiting), emits its lease, then an updated lease (same token, later
     * deadline) after each confirmed renewal; completes when the permit is lost. Cancelling
     * releases the permit.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return the hold stream
     */
    Flux<Lease> hold(String name, int permits, LockOptions options);

    /**
     * Streams the permits in use: first the current holders, then each change of holders
     * (acquired, released, expired; renewals are not changes). Ends when cancelled or the
     * semaphore closes, or with a {@link io.reactivelocks.LockBackendException}.
     *
     * @param name the semaphore name
     * @return the state stream
     */
    Flux<SemaphoreState> observe(String name);

    /**
     * Reads the permits in use once, within the request timeout.
     *
     * @param name the semaphore name
     * @return the current holders
     */
    Mono<SemaphoreState> inspect(String name);

    /**
     * @return the live view of this semaphore's permits held here, acquires in progress and
     *         releases the store did not confirm
     */
    io.reactivelocks.LockClientMetrics metrics();

    /**
     * Closes the semaphore: pending acquires fail with
     * {@link io.reactivelocks.LockClientClosedException}, held permits are released (best
     * effort), observe streams complete, the store is closed. Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
