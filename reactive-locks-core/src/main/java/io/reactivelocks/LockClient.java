package io.reactivelocks;

import io.reactivelocks.internal.DefaultLockClient;
import io.reactivelocks.spi.LockBackend;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A reactive, non-blocking distributed lock client: one per application and store. Nothing
 * happens until a returned publisher is subscribed; every publisher may be subscribed again to
 * repeat the operation. No method blocks, and no method ties a lock to a thread.
 *
 * <p>Arguments are checked at call time: a {@code null} argument throws
 * {@link NullPointerException}, an empty name or a name over 1024 UTF-8 bytes throws
 * {@link IllegalArgumentException}; both name the argument. Failures after subscribe are
 * {@code onError} signals of {@link LockException} subtypes.
 */
public interface LockClient {

    /** Longest lock name accepted, in UTF-8 bytes. */
    int MAX_NAME_BYTES = 1024;

    /**
     * Creates a client over a backend, with {@link LockOptions#defaults()}.
     *
     * @param backend the store adapter (for example {@code io.reactivelocks.local.LocalLockBackend})
     * @return the client; close it with {@link #close()}
     */
    static LockClient create(LockBackend backend) {
        return create(backend, LockOptions.defaults());
    }

    /**
     * Creates a client over a backend.
     *
     * @param backend  the store adapter
     * @param defaults the options used by the methods that take none; their
     *                 {@linkplain LockOptions#listener() listener} gets the client's events
     * @return the client; close it with {@link #close()}
     */
    static LockClient create(LockBackend backend, LockOptions defaults) {
        return new DefaultLockClient(backend, defaults, defaults.listener());
    }

    /**
     * Creates a client over a backend that reports to a listener (metrics, tracing): the same as
     * {@code create(backend, defaults.mutate().listener(listener).build())}.
     *
     * @param backend  the store adapter
     * @param defaults the options used by the methods that take none
     * @param listener called as locks are acquired, renewed, released and lost (instead of the
     *                 options' listener)
     * @return the client; close it with {@link #close()}
     */
    static LockClient create(LockBackend backend, LockOptions defaults, LockListener listener) {
        return create(backend, defaults.mutate().listener(listener).build());
    }

    /** @return the options used by the methods that take none */
    LockOptions options();

    /**
     * Acquires the lock, waiting as long as it takes (see {@link #acquire(String, LockOptions)}).
     *
     * @param name the lock name
     * @return a {@code Mono} of the granted lease
     */
    default Mono<Lease> acquire(String name) {
        return acquire(name, options());
    }

    /**
     * Acquires the lock. On subscribe, one attempt is sent; while another owner holds the lock,
     * the next attempt waits for the first of a release notification, the holder's remaining TTL
     * and the next backoff step. The granted lease is renewed in the background until you call
     * {@link Lease#release()} (or it is lost, or the client is closed): always release it, or
     * prefer {@link #withLock} / {@link #hold}, which release for you.
     *
     * <p>Cancel: at any moment, including while a request is in flight, leaves nothing behind —
     * a grant that arrives after the cancel is released. (Once the lease has been handed to the
     * subscriber it is the subscriber's: a lambda subscriber disposed at that very moment drops
     * it, as Reactor drops any value racing a dispose — prefer {@link #withLock} or
     * {@link #hold}, which are cancel-safe end to end.) Errors: {@link LockTimeoutException}
     * after the wait timeout; {@link LockBackendException} when the store fails permanently,
     * or is still failing when the wait timeout ends; {@link LockClientClosedException}.
     * Not reentrant (see {@link #withLock} for reentrancy).
     *
     * @param name    the lock name
     * @param options options for this call
     * @return a {@code Mono} of the granted lease
     */
    Mono<Lease> acquire(String name, LockOptions options);

    /**
     * One attempt, no waiting (see {@link #tryAcquire(String, LockOptions)}).
     *
     * @param name the lock name
     * @return the lease, or empty when someone else holds the lock
     */
    default Mono<Lease> tryAcquire(String name) {
        return tryAcquire(name, options());
    }

    /**
     * One attempt: emits the lease (renewed until released, like {@link #acquire}), or completes
     * empty when someone else holds the lock. Errors with {@link LockBackendException} when the
     * store fails or does not answer within the request timeout. Cancel releases a late grant.
     *
     * @param name    the lock name
     * @param options options for this call
     * @return the lease, or empty when held by someone else
     */
    Mono<Lease> tryAcquire(String name, LockOptions options);

    /**
     * Holds the lock as a stream (see {@link #hold(String, LockOptions)}).
     *
     * @param name the lock name
     * @return the hold stream
     */
    default Flux<Lease> hold(String name) {
        return hold(name, options());
    }

    /**
     * Acquires (waiting like {@link #acquire}), emits the lease, then an updated lease (same
     * token, later deadline) after each confirmed renewal. Completes when the lease is lost —
     * before any other client can be granted the lock, as the local deadline is taken from the
     * time the request was sent, minus a drift allowance. Cancelling releases the lock.
     *
     * @param name    the lock name
     * @param options options for this call
     * @return the hold stream
     */
    Flux<Lease> hold(String name, LockOptions options);

    /**
     * Runs {@code body} under the lock (see {@link #withLock(String, LockOptions, Function)}).
     *
     * @param name the lock name
     * @param body the work to do while holding the lock
     * @param <T>  the body's result type
     * @return the body's result
     */
    default <T> Mono<T> withLock(String name, Function<? super Lease, ? extends Mono<T>> body) {
        return withLock(name, options(), body);
    }

    /**
     * Scoped use: acquires, runs {@code body}, releases on complete, error and cancel
     * ({@code Mono.usingWhen}). If the lease is lost while the body runs, the body is cancelled
     * and the result is {@link LockLostException}. Reentrant through the Reactor
     * {@code Context}: a nested {@code withLock} on the same name and client in the same chain
     * reuses the held lease instead of deadlocking; unrelated chains never share a lease.
     *
     * @param name    the lock name
     * @param options options for this call (ignored when reentering)
     * @param body    the work to do while holding the lock
     * @param <T>     the body's result type
     * @return the body's result
     */
    <T> Mono<T> withLock(String name, LockOptions options, Function<? super Lease, ? extends Mono<T>> body);

    /**
     * Streaming variant of {@link #withLock(String, Function)}.
     *
     * @param name the lock name
     * @param body the streaming work to do while holding the lock
     * @param <T>  the element type
     * @return the body's elements
     */
    default <T> Flux<T> withLockMany(String name, Function<? super Lease, ? extends Publisher<T>> body) {
        return withLockMany(name, options(), body);
    }

    /**
     * Streaming variant of {@link #withLock(String, LockOptions, Function)}: the lock is held
     * until the body's stream terminates or is cancelled; a loss cancels the body and ends the
     * stream with {@link LockLostException}. Reentrant like {@code withLock}.
     *
     * @param name    the lock name
     * @param options options for this call (ignored when reentering)
     * @param body    the streaming work to do while holding the lock
     * @param <T>     the element type
     * @return the body's elements
     */
    <T> Flux<T> withLockMany(String name, LockOptions options, Function<? super Lease, ? extends Publisher<T>> body);

    /**
     * Reads the lock's state once: {@link LockState.Held} with the holder's owner, token and
     * payload, or {@link LockState.Free}. Errors with {@link LockBackendException} when the store
     * cannot be read within the request timeout.
     *
     * @param name the lock name
     * @return a {@code Mono} that reads on subscribe
     */
    Mono<LockState> inspect(String name);

    /**
     * Streams the lock's state: first the current state, then each change of holder (acquired,
     * handed over, released, expired) or of the holder's payload. Renewals by the same holder are
     * not changes. Each change is read from the store, and a newer one replaces a read in flight:
     * changes closer together than a read come as the latest state. All
     * subscribers of one name share one upstream subscription per client; the stream ends only
     * when cancelled or the client closes (completes), or with a {@link LockBackendException}.
     * Subscribed after the client was closed, it fails with {@link LockClientClosedException}.
     *
     * @param name the lock name
     * @return the state stream
     */
    Flux<LockState> observe(String name);

    /**
     * Completes when the lock is next free — at once if it is free now (released or expired).
     * Fails with {@link LockClientClosedException} when the client is (or gets) closed before
     * that, and with {@link LockBackendException} when the state cannot be read.
     *
     * @param name the lock name
     * @return a {@code Mono} that completes when the lock is free
     */
    Mono<Void> awaitRelease(String name);

    /**
     * The client's live view: the leases it holds now and the acquires in progress, as
     * reactor-pool's {@code InstrumentedPool.metrics()} shows a pool's.
     *
     * @return the view; the same object on every call, each of its reads current
     */
    LockClientMetrics metrics();

    /**
     * Closes the client: pending acquires fail with {@link LockClientClosedException}, held
     * leases are released (best effort), observe streams complete, the backend is closed. The
     * backend is closed only after every request of an acquire cancelled or failed earlier has
     * settled and the release of what it may have taken was answered — at most twice the request
     * timeout; past that it closes anyway and logs the names not confirmed
     * released. Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
