package io.reactivelocks.blocking;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.multi.MultiLock;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * Takes a set of lock names all or nothing, blocking, over a core {@link MultiLock} (names taken
 * one by one in the canonical order, so overlapping sets never deadlock). Waiting, interruption
 * (= cancellation, {@link InterruptedException}), errors and the refusal on Reactor non-blocking
 * threads are as described on {@link BlockingLocks}.
 *
 * <pre>{@code
 * BlockingMultiLock accounts = BlockingMultiLock.of(store.multiLocks(LockOptions.defaults()));
 * accounts.withLocks(List.of("account:7", "account:3"),
 *         set -> transfer(set.token("account:7"), set.token("account:3")));
 * }</pre>
 *
 * <p><b>Reentrancy.</b> Inside {@code withLocks}, a {@link BlockingLocks#withLock} of the same client
 * on one of the set's names on the same thread reuses that name's lease. A {@code withLocks} whose
 * set contains a name that a {@code withLock} of the same client holds on this thread throws
 * {@link IllegalStateException} (the reactive one reuses it within one chain; a blocking call cannot
 * hand the outer lease to the engine).
 */
public final class BlockingMultiLock {

    private final MultiLock multi;

    private BlockingMultiLock(MultiLock multi) {
        this.multi = multi;
    }

    /**
     * @param multi the reactive multi-lock whose engine does the work
     * @return a blocking view of it; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code multi} when it is null
     */
    public static BlockingMultiLock of(MultiLock multi) {
        return new BlockingMultiLock(Objects.requireNonNull(multi, "multi"));
    }

    /** @return the reactive multi-lock underneath */
    public MultiLock multiLock() {
        return multi;
    }

    /** @return the client the locks are taken with, blocking (close it to close the multi-lock's locks) */
    public BlockingLocks client() {
        return BlockingLocks.of(multi.client());
    }

    /**
     * Acquires every name with the client's default options.
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @return the granted set; release it (try-with-resources)
     * @throws InterruptedException when interrupted while waiting: nothing is left held
     */
    public BlockingMultiLease acquire(Collection<String> names) throws InterruptedException {
        return acquire(names, multi.client().options());
    }

    /**
     * Acquires every name, waiting like {@link MultiLock#acquire(Collection, LockOptions)}; the wait
     * timeout bounds the whole set.
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @return the granted set
     * @throws InterruptedException  when interrupted while waiting: what was taken is released
     * @throws LockTimeoutException  after the wait timeout, naming the name being awaited
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public BlockingMultiLease acquire(Collection<String> names, LockOptions options) throws InterruptedException {
        Mono<MultiLease> acquire = multi.acquire(names, options);
        Await.refuseNonBlocking("BlockingMultiLock.acquire");
        MultiLease set = Await.interruptibly(acquire, "acquire", BlockingMultiLock::releaseOrphan);
        return new BlockingMultiLease(Objects.requireNonNull(set, "the engine's acquire completed without a set"));
    }

    /**
     * One attempt per name with the client's default options.
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @return the set, or empty when a name is held by someone else
     * @throws InterruptedException when interrupted while an attempt is in flight: nothing is left held
     */
    public Optional<BlockingMultiLease> tryAcquire(Collection<String> names) throws InterruptedException {
        return tryAcquire(names, multi.client().options());
    }

    /**
     * All or nothing without waiting for holders (see {@link MultiLock#tryAcquire(Collection, LockOptions)}).
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @return the set, or empty when a name is held by someone else (what was taken is released)
     * @throws InterruptedException  when interrupted while an attempt is in flight: nothing is left held
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Optional<BlockingMultiLease> tryAcquire(Collection<String> names, LockOptions options) throws InterruptedException {
        Mono<MultiLease> attempt = multi.tryAcquire(names, options);
        Await.refuseNonBlocking("BlockingMultiLock.tryAcquire");
        return Optional.ofNullable(Await.interruptibly(attempt, "tryAcquire", BlockingMultiLock::releaseOrphan))
                .map(BlockingMultiLease::new);
    }

    /**
     * Runs {@code body} under every lock with the client's default options.
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @param body  the work, on the calling thread
     * @param <T>   the result type
     * @param <E>   the checked exception the body may throw
     * @return the body's result
     * @throws E                    the body's own exception, unchanged
     * @throws InterruptedException when interrupted while waiting (the body did not run)
     */
    public <T, E extends Exception> T withLocks(Collection<String> names, GrantBody<? super BlockingMultiLease, T, E> body)
            throws E, InterruptedException {
        return withLocks(names, multi.client().options(), body);
    }

    /**
     * Scoped use: acquires the set, runs {@code body} on the calling thread, releases every lease
     * when it ends. If a lease is lost while the body runs, this thread is interrupted and the call
     * then throws {@link LockLostException} naming that lock (the body's own exception suppressed).
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease taken
     * @param body    the work, on the calling thread
     * @param <T>     the result type
     * @param <E>     the checked exception the body may throw
     * @return the body's result
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted while waiting: what was taken is released
     * @throws LockLostException     when a lease was lost before the body ended
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when a name is held on this thread by a {@code withLock} of the
     *                               same client, or on a Reactor non-blocking thread
     */
    public <T, E extends Exception> T withLocks(Collection<String> names, LockOptions options,
                                                GrantBody<? super BlockingMultiLease, T, E> body)
            throws E, InterruptedException {
        Objects.requireNonNull(body, "body");
        for (String name : MultiLock.canonicalOrder(names)) {
            if (HeldOnThread.find(multi.client(), name) != null) {
                throw new IllegalStateException("'" + name + "' is held on this thread by a withLock of the same client:"
                        + " take the other names with withLock inside it, or the whole set first");
            }
        }
        Await.refuseNonBlocking("BlockingMultiLock.withLocks");
        return CallerScope.<MultiLease, T, E>run(b -> multi.withLocks(names, options, b), set -> {
            BlockingMultiLease held = new BlockingMultiLease(set);
            for (BlockingLease lease : held.leases()) {
                HeldOnThread.push(multi.client(), lease.name(), lease);
            }
            try {
                return body.apply(held);
            } finally {
                for (int i = 0; i < held.leases().size(); i++) {
                    HeldOnThread.pop();
                }
            }
        }, "withLocks");
    }

    /**
     * Holds the set with the client's default options (see {@link #hold(Collection, LockOptions, StreamBody)}).
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @param body  called with the set; {@code false} to release and return
     * @param <E>   the checked exception the body may throw
     * @throws E                    the body's own exception (the set is released)
     * @throws InterruptedException when interrupted: the set is released
     */
    public <E extends Exception> void hold(Collection<String> names, StreamBody<? super BlockingMultiLease, E> body)
            throws E, InterruptedException {
        hold(names, multi.client().options(), body);
    }

    /**
     * Holds the set as {@link MultiLock#hold} does, on the calling thread: acquires it, calls
     * {@code body} with it, and returns when any lease is lost (the others are then released).
     * When the body returns {@code false} or throws, or the thread is interrupted, the set is
     * released before the call returns.
     *
     * @param names   the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @param body    called with the set; {@code false} to release and return
     * @param <E>     the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted: the set is released
     * @throws LockTimeoutException  after the wait timeout
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void hold(Collection<String> names, LockOptions options,
                                           StreamBody<? super BlockingMultiLease, E> body) throws E, InterruptedException {
        var hold = multi.hold(names, options).map(BlockingMultiLease::new);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingMultiLock.hold");
        Await.each(hold, "hold", false, body, BlockingMultiLease::release, null);
    }

    private static void releaseOrphan(MultiLease set) {
        set.release().subscribe(null, e -> { });
    }

    /** @return a description naming the multi-lock */
    @Override
    public String toString() {
        return "BlockingMultiLock[" + multi + "]";
    }
}
