package io.reactivelocks.blocking;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockClientMetrics;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockTimeoutException;
import java.util.Objects;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * Blocking locks for code that runs on threads — virtual threads above all — over the one reactive
 * engine of a {@link LockClient}: the same leases, renewal, fencing tokens, wake-ups and clean-up,
 * with the calling thread parked until the answer comes.
 *
 * <pre>{@code
 * BlockingLocks locks = BlockingLocks.of(store.locks());   // store = RedisLocks.connect(redisClient)
 * Receipt r = locks.withLock("order:42", lease -> charge(order, lease.token()));
 * }</pre>
 *
 * <p><b>Waiting</b> parks the thread with {@code LockSupport} (through {@code CompletableFuture}):
 * no monitor is held and {@code Object.wait} is never used, so a waiting virtual thread unmounts
 * and thousands of them wait on a few carriers. <b>Never call these methods on a Reactor
 * non-blocking thread</b> (an event loop, {@code Schedulers.parallel()}): they refuse with
 * {@link IllegalStateException} there — BlockHound would flag them too. Use the reactive
 * {@link LockClient} on those threads.
 *
 * <p><b>Interruption is cancellation.</b> A thread interrupted while it waits in {@code acquire},
 * {@code tryAcquire} or {@code withLock} cancels the engine's subscription — the engine then
 * releases whatever a request in flight took, so nothing is left on the store — and the call
 * throws {@link InterruptedException} (interrupt status cleared, as by {@code Thread.sleep}).
 *
 * <p><b>Errors</b> are the engine's own {@link io.reactivelocks.LockException}s, thrown unwrapped
 * (with a suppressed marker showing the calling thread's stack): {@link LockTimeoutException},
 * {@link LockBackendException}, {@link LockClientClosedException}, {@link LockLostException}.
 * Arguments are checked at call time as by {@link LockClient}: {@code null} throws
 * {@link NullPointerException}, a bad name or option {@link IllegalArgumentException}, naming it.
 * Instances are immutable and thread-safe; {@link #close()} closes the {@link #client()}.
 */
public final class BlockingLocks implements AutoCloseable {

    private final LockClient client;

    private BlockingLocks(LockClient client) {
        this.client = client;
    }

    /**
     * @param client the reactive client whose engine does the work (one per application and store)
     * @return a blocking view of {@code client}; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code client} when it is null
     */
    public static BlockingLocks of(LockClient client) {
        return new BlockingLocks(Objects.requireNonNull(client, "client"));
    }

    /** @return the reactive client underneath */
    public LockClient client() {
        return client;
    }

    /**
     * Acquires the lock with the client's default options, waiting as long as they say (see
     * {@link #acquire(String, LockOptions)}).
     *
     * @param name the lock name
     * @return the held lease; release it (try-with-resources)
     * @throws InterruptedException when interrupted while waiting: nothing is left held
     */
    public BlockingLease acquire(String name) throws InterruptedException {
        return acquire(name, client.options());
    }

    /**
     * Acquires the lock, waiting like {@link LockClient#acquire(String, LockOptions)}: for a
     * release notification, the holder's TTL or the next backoff step, until granted, the wait
     * timeout passes or the thread is interrupted. The lease is renewed in the background until
     * released: always release it, best with try-with-resources. Not reentrant.
     *
     * @param name    the lock name
     * @param options options for this call (lease time, wait timeout, backoff, payload, ...)
     * @return the held lease
     * @throws InterruptedException  when interrupted while waiting: the acquire is cancelled and a
     *                               grant in flight is released
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails permanently, or still fails at the wait timeout
     * @throws LockClientClosedException when the client is closed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public BlockingLease acquire(String name, LockOptions options) throws InterruptedException {
        Mono<Lease> acquire = client.acquire(name, options);
        Await.refuseNonBlocking("BlockingLocks.acquire");
        Lease lease = Await.interruptibly(acquire, "acquire", Await::releaseOrphan);
        return new BlockingLease(Objects.requireNonNull(lease, "the engine's acquire completed without a lease"));
    }

    /**
     * One attempt with the client's default options (see {@link #tryAcquire(String, LockOptions)}).
     *
     * @param name the lock name
     * @return the held lease, or empty when someone else holds the lock
     * @throws InterruptedException when interrupted while the attempt is in flight: nothing is left held
     */
    public Optional<BlockingLease> tryAcquire(String name) throws InterruptedException {
        return tryAcquire(name, client.options());
    }

    /**
     * One attempt, no waiting for the holder: returns the lease (renewed until released), or
     * empty when someone else holds the lock. The thread still waits for the store's answer,
     * at most the request timeout.
     *
     * @param name    the lock name
     * @param options options for this call
     * @return the held lease, or empty when held by someone else
     * @throws InterruptedException  when interrupted while the attempt is in flight: a late grant is released
     * @throws LockBackendException  when the store fails or does not answer within the request timeout
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Optional<BlockingLease> tryAcquire(String name, LockOptions options) throws InterruptedException {
        Mono<Lease> attempt = client.tryAcquire(name, options);
        Await.refuseNonBlocking("BlockingLocks.tryAcquire");
        return Optional.ofNullable(Await.interruptibly(attempt, "tryAcquire", Await::releaseOrphan))
                .map(BlockingLease::new);
    }

    /**
     * Runs {@code body} under the lock with the client's default options (see
     * {@link #withLock(String, LockOptions, LeaseBody)}).
     *
     * @param name the lock name
     * @param body the work, run on the calling thread while the lock is held
     * @param <T>  the result type
     * @param <E>  the checked exception the body may throw
     * @return the body's result
     * @throws E                    the body's own exception, unchanged
     * @throws InterruptedException when interrupted while waiting for the lock (the body did not run)
     */
    public <T, E extends Exception> T withLock(String name, LeaseBody<T, E> body) throws E, InterruptedException {
        return withLock(name, client.options(), body);
    }

    /**
     * Scoped use: acquires (waiting like {@link #acquire(String, LockOptions)}), runs {@code body}
     * on the calling thread, and releases when the body returns or throws.
     *
     * <p><b>Loss.</b> If the lease is lost while the body runs, this thread is interrupted (so a
     * body blocked in I/O, {@code sleep} or a lock wakes up), and once the body has ended the call
     * throws {@link LockLostException} — with the body's own exception, if any, suppressed — instead
     * of returning: the work must be treated as not done under the lock. A body that ends after the
     * lease's deadline passed fails the same way. The interrupt status set for the loss is cleared
     * before the call throws.
     *
     * <p><b>Reentrant per thread</b>: a nested {@code withLock} on the same name and client on the
     * same thread reuses the held lease ({@code options} are then ignored). Other threads — even
     * ones the body starts — never share it. An interrupt while waiting for the lock throws
     * {@link InterruptedException} before the body ran; a release that fails after a successful body
     * throws the release's {@link LockBackendException}.
     *
     * @param name    the lock name
     * @param options options for this call (ignored when reentering)
     * @param body    the work, run on the calling thread while the lock is held
     * @param <T>     the result type
     * @param <E>     the checked exception the body may throw
     * @return the body's result
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted while waiting for the lock: nothing is left held
     * @throws LockLostException     when the lease was lost before the body ended
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails
     * @throws LockClientClosedException when the client is closed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <T, E extends Exception> T withLock(String name, LockOptions options, LeaseBody<T, E> body)
            throws E, InterruptedException {
        Mono<Lease> acquire = client.acquire(name, options);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingLocks.withLock");
        BlockingLease outer = HeldOnThread.find(client, name);
        if (outer != null) {
            return LeaseScope.run(outer, body, false);
        }
        Lease granted = Await.interruptibly(acquire, "withLock", Await::releaseOrphan);
        BlockingLease lease = new BlockingLease(Objects.requireNonNull(granted, "the engine's acquire completed without a lease"));
        HeldOnThread.push(client, name, lease);
        try {
            return LeaseScope.run(lease, body, true);
        } finally {
            HeldOnThread.pop();
        }
    }

    /** @return the options used by the methods that take none (the client's) */
    public LockOptions options() {
        return client.options();
    }

    /**
     * Holds the lock with the client's default options (see {@link #hold(String, LockOptions, StreamBody)}).
     *
     * @param name the lock name
     * @param body called with the lease, then after each confirmed renewal
     * @param <E>  the checked exception the body may throw
     * @throws E                    the body's own exception (the lock is then released)
     * @throws InterruptedException when interrupted while waiting: the hold is cancelled, the lock released
     */
    public <E extends Exception> void hold(String name, StreamBody<? super BlockingLease, E> body)
            throws E, InterruptedException {
        hold(name, client.options(), body);
    }

    /**
     * Holds the lock as {@link LockClient#hold} does, on the calling thread: acquires (waiting like
     * {@link #acquire(String, LockOptions)}), calls {@code body} with the lease, then again after
     * each confirmed renewal (same token, later deadline), and returns when the lease is lost —
     * before any other client can be granted it. When {@code body} returns {@code false} or throws,
     * or the thread is interrupted, the lock is released before the call returns (or throws).
     *
     * @param name    the lock name
     * @param options options for this call
     * @param body    called with the lease, then after each renewal; {@code false} to release and return
     * @param <E>     the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged (the lock is released)
     * @throws InterruptedException  when interrupted: the lock is released
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void hold(String name, LockOptions options, StreamBody<? super BlockingLease, E> body)
            throws E, InterruptedException {
        var hold = client.hold(name, options).map(BlockingLease::new);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingLocks.hold");
        Await.each(hold, "hold", false, body, BlockingLease::release, null);
    }

    /**
     * Reads the lock's state once (see {@link LockClient#inspect}).
     *
     * @param name the lock name
     * @return {@link LockState.Held} with the holder's owner, token and payload, or {@link LockState.Free}
     * @throws InterruptedException  when interrupted while waiting for the store
     * @throws LockBackendException  when the store cannot be read within the request timeout
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public LockState inspect(String name) throws InterruptedException {
        Mono<LockState> inspect = client.inspect(name);
        Await.refuseNonBlocking("BlockingLocks.inspect");
        return Objects.requireNonNull(Await.interruptibly(inspect, "inspect", s -> { }), "inspect completed empty");
    }

    /**
     * Follows the lock's state (see {@link LockClient#observe}): calls {@code body} with the current
     * state, then with each change of holder or payload, until the body returns {@code false} or
     * throws, the thread is interrupted, or the client closes (the call then returns).
     *
     * @param name the lock name
     * @param body called with each state; {@code false} to stop
     * @param <E>  the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted while waiting for a change
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void observe(String name, StreamBody<? super LockState, E> body)
            throws E, InterruptedException {
        var states = client.observe(name);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingLocks.observe");
        Await.each(states, "observe", false, body, null, null);
    }

    /**
     * Waits until the lock is next free — at once if it is free now (see {@link LockClient#awaitRelease}).
     *
     * @param name the lock name
     * @throws InterruptedException      when interrupted while waiting
     * @throws LockClientClosedException when the client is (or gets) closed before that
     * @throws LockBackendException      when the state cannot be read
     * @throws IllegalStateException     when called on a Reactor non-blocking thread
     */
    public void awaitRelease(String name) throws InterruptedException {
        Mono<Void> free = client.awaitRelease(name);
        Await.refuseNonBlocking("BlockingLocks.awaitRelease");
        Await.interruptibly(free, "awaitRelease", v -> { });
    }

    /** @return the client's live view: the leases it holds and the acquires in progress */
    public LockClientMetrics metrics() {
        return client.metrics();
    }

    /**
     * Closes the client underneath (see {@link LockClient#close}): pending acquires fail, held leases
     * are released. Idempotent; the wait is not interruptible and bounded by the client's close.
     */
    @Override
    public void close() {
        Await.closing(client.close(), "BlockingLocks.close");
    }

    /** @return a description naming the client */
    @Override
    public String toString() {
        return "BlockingLocks[" + client + "]";
    }
}
