package io.reactivelocks.blocking;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.semaphore.SemaphoreState;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * Blocking permits of a distributed {@link Semaphore}, for code on (virtual) threads, over the
 * semaphore's one engine. Waiting, interruption (= cancellation, {@link InterruptedException}),
 * errors and the refusal on Reactor non-blocking threads are as described on {@link BlockingLocks}.
 *
 * <pre>{@code
 * BlockingSemaphore exports = BlockingSemaphore.of(store.semaphores(options));   // store = RedisLocks.connect(redisClient)
 * exports.withPermit("exports", 4, permit -> runExport(permit.token()));   // at most 4 at once
 * }</pre>
 */
public final class BlockingSemaphore implements AutoCloseable {

    private final Semaphore semaphore;

    private BlockingSemaphore(Semaphore semaphore) {
        this.semaphore = semaphore;
    }

    /**
     * @param semaphore the reactive semaphore whose engine does the work
     * @return a blocking view of it; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code semaphore} when it is null
     */
    public static BlockingSemaphore of(Semaphore semaphore) {
        return new BlockingSemaphore(Objects.requireNonNull(semaphore, "semaphore"));
    }

    /** @return the reactive semaphore underneath */
    public Semaphore semaphore() {
        return semaphore;
    }

    /**
     * Acquires one permit with the semaphore's default options.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @return the permit's lease; release it (try-with-resources)
     * @throws InterruptedException when interrupted while waiting: nothing is left held
     */
    public BlockingLease acquire(String name, int permits) throws InterruptedException {
        return acquire(name, permits, semaphore.options());
    }

    /**
     * Acquires one permit, waiting like {@link Semaphore#acquire(String, int, int, LockOptions)}
     * until one is free, the wait timeout passes or the thread is interrupted.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return the permit's lease, renewed until released
     * @throws InterruptedException  when interrupted while waiting: a grant in flight is released
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails
     * @throws LockClientClosedException when the semaphore is closed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public BlockingLease acquire(String name, int permits, LockOptions options) throws InterruptedException {
        Mono<List<Lease>> acquire = semaphore.acquire(name, permits, 1, options);
        Await.refuseNonBlocking("BlockingSemaphore.acquire");
        List<Lease> leases = Await.interruptibly(acquire, "acquire", Await::releaseOrphans);
        return new BlockingLease(Objects.requireNonNull(leases, "the engine's acquire completed without a permit").get(0));
    }

    /**
     * One attempt for one permit with the semaphore's default options.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @return the permit's lease, or empty when none is free
     * @throws InterruptedException when interrupted while the attempt is in flight: nothing is left held
     */
    public Optional<BlockingLease> tryAcquire(String name, int permits) throws InterruptedException {
        return tryAcquire(name, permits, semaphore.options());
    }

    /**
     * One attempt for one permit: the lease, or empty when none is free.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return the permit's lease, or empty
     * @throws InterruptedException  when interrupted while the attempt is in flight: a late grant is released
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Optional<BlockingLease> tryAcquire(String name, int permits, LockOptions options) throws InterruptedException {
        Mono<List<Lease>> attempt = semaphore.tryAcquire(name, permits, 1, options);
        Await.refuseNonBlocking("BlockingSemaphore.tryAcquire");
        return Optional.ofNullable(Await.interruptibly(attempt, "tryAcquire", Await::releaseOrphans))
                .map(leases -> new BlockingLease(leases.get(0)));
    }

    /**
     * Runs {@code body} under one permit with the semaphore's default options (see
     * {@link #withPermit(String, int, LockOptions, LeaseBody)}).
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param body    the work, run on the calling thread while the permit is held
     * @param <T>     the result type
     * @param <E>     the checked exception the body may throw
     * @return the body's result
     * @throws E                    the body's own exception, unchanged
     * @throws InterruptedException when interrupted while waiting for a permit (the body did not run)
     */
    public <T, E extends Exception> T withPermit(String name, int permits, LeaseBody<T, E> body)
            throws E, InterruptedException {
        return withPermit(name, permits, semaphore.options(), body);
    }

    /**
     * Scoped use: acquires one permit, runs {@code body} on the calling thread, releases when it
     * returns or throws. A permit lost while the body runs interrupts this thread and, once the
     * body ended, throws {@link LockLostException} as {@link BlockingLocks#withLock} does. Not
     * reentrant: each call takes its own permit.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @param body    the work, run on the calling thread while the permit is held
     * @param <T>     the result type
     * @param <E>     the checked exception the body may throw
     * @return the body's result
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted while waiting for a permit: nothing is left held
     * @throws LockLostException     when the permit was lost before the body ended
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <T, E extends Exception> T withPermit(String name, int permits, LockOptions options, LeaseBody<T, E> body)
            throws E, InterruptedException {
        Objects.requireNonNull(body, "body");
        BlockingLease permit = acquire(name, permits, options);
        return LeaseScope.run(permit, body, true);
    }

    /** @return the options used by the methods that take none (the semaphore's) */
    public LockOptions options() {
        return semaphore.options();
    }

    /**
     * Acquires {@code count} permits at once, all or none, waiting like
     * {@link Semaphore#acquire(String, int, int, LockOptions)}.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param count   how many permits, from 1 to {@code permits}
     * @param options options for this call
     * @return one lease per permit; release each (or close them)
     * @throws InterruptedException  when interrupted while waiting: a grant in flight is released
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<BlockingLease> acquire(String name, int permits, int count, LockOptions options) throws InterruptedException {
        Mono<List<Lease>> acquire = semaphore.acquire(name, permits, count, options);
        Await.refuseNonBlocking("BlockingSemaphore.acquire");
        List<Lease> leases = Await.interruptibly(acquire, "acquire", Await::releaseOrphans);
        return Objects.requireNonNull(leases, "the engine's acquire completed without permits").stream()
                .map(BlockingLease::new).toList();
    }

    /**
     * One attempt for {@code count} permits at once (see {@link Semaphore#tryAcquire(String, int, int, LockOptions)}).
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param count   how many permits, from 1 to {@code permits}
     * @param options options for this call
     * @return one lease per permit, or empty when not enough are free
     * @throws InterruptedException  when interrupted while the attempt is in flight: a late grant is released
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Optional<List<BlockingLease>> tryAcquire(String name, int permits, int count, LockOptions options)
            throws InterruptedException {
        Mono<List<Lease>> attempt = semaphore.tryAcquire(name, permits, count, options);
        Await.refuseNonBlocking("BlockingSemaphore.tryAcquire");
        return Optional.ofNullable(Await.interruptibly(attempt, "tryAcquire", Await::releaseOrphans))
                .map(leases -> leases.stream().map(BlockingLease::new).toList());
    }

    /**
     * Holds one permit with the default options (see {@link #hold(String, int, LockOptions, StreamBody)}).
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param body    called with the permit's lease, then after each renewal
     * @param <E>     the checked exception the body may throw
     * @throws E                    the body's own exception (the permit is released)
     * @throws InterruptedException when interrupted: the permit is released
     */
    public <E extends Exception> void hold(String name, int permits, StreamBody<? super BlockingLease, E> body)
            throws E, InterruptedException {
        hold(name, permits, semaphore.options(), body);
    }

    /**
     * Holds one permit as {@link Semaphore#hold} does, on the calling thread: calls {@code body}
     * with the permit's lease, then after each confirmed renewal, and returns when the permit is
     * lost. When {@code body} returns {@code false} or throws, or the thread is interrupted, the
     * permit is released before the call returns.
     *
     * @param name    the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @param body    called with the lease, then after each renewal; {@code false} to release and return
     * @param <E>     the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted: the permit is released
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void hold(String name, int permits, LockOptions options,
                                           StreamBody<? super BlockingLease, E> body) throws E, InterruptedException {
        var hold = semaphore.hold(name, permits, options).map(BlockingLease::new);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingSemaphore.hold");
        Await.each(hold, "hold", false, body, BlockingLease::release, null);
    }

    /**
     * Reads the permits in use once (see {@link Semaphore#inspect}).
     *
     * @param name the semaphore name
     * @return the current holders
     * @throws InterruptedException  when interrupted while waiting for the store
     * @throws io.reactivelocks.LockBackendException when the store cannot be read within the request timeout
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public SemaphoreState inspect(String name) throws InterruptedException {
        var inspect = semaphore.inspect(name);
        Await.refuseNonBlocking("BlockingSemaphore.inspect");
        return java.util.Objects.requireNonNull(Await.interruptibly(inspect, "inspect", s -> { }), "inspect completed empty");
    }

    /** @return the semaphore's live view: the permits held here and the acquires in progress */
    public io.reactivelocks.LockClientMetrics metrics() {
        return semaphore.metrics();
    }

    /**
     * Follows the permits in use (see {@link Semaphore#observe}): calls {@code body} with the current
     * holders, then with each change, until it returns {@code false} or throws, the thread is
     * interrupted, or the semaphore closes.
     *
     * @param name the semaphore name
     * @param body called with each state; {@code false} to stop
     * @param <E>  the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted while waiting for a change
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void observe(String name, StreamBody<? super SemaphoreState, E> body)
            throws E, InterruptedException {
        var states = semaphore.observe(name);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingSemaphore.observe");
        Await.each(states, "observe", false, body, null, null);
    }

    /** Closes the semaphore underneath (see {@link Semaphore#close}); idempotent, not interruptible. */
    @Override
    public void close() {
        Await.closing(semaphore.close(), "BlockingSemaphore.close");
    }

    /** @return a description naming the semaphore */
    @Override
    public String toString() {
        return "BlockingSemaphore[" + semaphore + "]";
    }
}
