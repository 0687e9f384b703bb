package io.reactivelocks.blocking;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.multi.MultiLease;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import reactor.core.scheduler.Schedulers;

/**
 * A granted set of locks for blocking code: a view of the engine's {@link MultiLease}, one lease
 * per distinct name, each renewed in the background, held all or nothing. Ownership belongs to
 * this object, never to a thread; {@link #release()} and {@link #close()} are idempotent, so it
 * fits try-with-resources.
 */
public final class BlockingMultiLease implements AutoCloseable {

    private final MultiLease set;
    private final List<BlockingLease> leases;
    private final CompletableFuture<Void> lost;

    BlockingMultiLease(MultiLease set) {
        this.set = Objects.requireNonNull(set, "set");
        this.leases = set.leases().stream().map(BlockingLease::new).toList();
        this.lost = set.lost().toFuture();
    }

    /** @return the engine's reactive view of this set */
    public MultiLease multiLease() {
        return set;
    }

    /** @return the distinct names, in the canonical order in which they were taken */
    public List<String> names() {
        return set.names();
    }

    /** @return the leases, one per name, in the order of {@link #names()} */
    public List<BlockingLease> leases() {
        return leases;
    }

    /**
     * @param name one of {@link #names()}
     * @return the lease of {@code name}
     * @throws IllegalArgumentException naming {@code name} when it is not part of this set
     */
    public BlockingLease lease(String name) {
        return leases.get(set.names().indexOf(set.lease(name).name()));
    }

    /**
     * @param name one of {@link #names()}
     * @return the fencing token of {@code name}'s lease
     * @throws IllegalArgumentException naming {@code name} when it is not part of this set
     */
    public long token(String name) {
        return set.token(name);
    }

    /** @return {@code true} while every lease of the set is valid */
    public boolean isValid() {
        return set.isValid();
    }

    /** @return the shortest time left of the leases' current deadlines; zero when one has passed */
    public Duration remaining() {
        return set.remaining();
    }

    /** @return {@code true} once a lease of the set was lost (the others are then released) */
    public boolean isLost() {
        return lost.isDone();
    }

    /**
     * @return a stage that completes when any lease of the set is lost (not when the set is
     *         released); callbacks run on the engine's thread: keep them short and non-blocking
     */
    public CompletionStage<Void> whenLost() {
        return lost.minimalCompletionStage();
    }

    /**
     * Releases every lease of the set, owner-checked, and waits until the store confirmed.
     * Idempotent; not interruptible (bounded by the request timeout). On a Reactor non-blocking
     * thread it starts the release and returns.
     *
     * @throws LockBackendException when a release could not reach the store (that lease expires by its TTL)
     */
    public void release() {
        if (Schedulers.isInNonBlockingThread()) {
            set.release().subscribe(null, e -> { });
            return;
        }
        Await.uninterruptibly(set.release(), "release");
    }

    /** The same as {@link #release()}, for try-with-resources. */
    @Override
    public void close() {
        release();
    }

    /** @return the names and tokens, for logs */
    @Override
    public String toString() {
        return "BlockingMultiLease" + leases;
    }
}
