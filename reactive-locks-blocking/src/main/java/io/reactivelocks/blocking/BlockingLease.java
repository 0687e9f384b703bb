package io.reactivelocks.blocking;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * A granted lock (or semaphore permit) for blocking code: a view of the engine's {@link Lease},
 * renewed in the background until released or lost. Ownership belongs to this object, never to a
 * thread: {@link #release()} and {@link #close()} may be called from any thread, any number of
 * times, so it fits try-with-resources:
 *
 * <pre>{@code
 * try (BlockingLease lease = locks.acquire("order:42")) {
 *     charge(order, lease.token());
 * }   // released here
 * }</pre>
 *
 * <p>A lease taken with {@link BlockingLocks#acquire} is not watched for loss on your behalf:
 * check {@link #isValid()} or {@link #whenLost()} (or use {@link BlockingLocks#withLock}, which
 * interrupts its body on loss).
 */
public final class BlockingLease implements AutoCloseable {

    private final Lease lease;
    private final CompletableFuture<Void> lost;
    private volatile boolean released;

    BlockingLease(Lease lease) {
        this.lease = Objects.requireNonNull(lease, "lease");
        this.lost = lease.lost().toFuture();
    }

    /** @return the engine's reactive view of this grant (for {@code observe}, {@code updatePayload} in a chain, ...) */
    public Lease lease() {
        return lease;
    }

    /** @return the lock (or semaphore) name */
    public String name() {
        return lease.name();
    }

    /** @return the random owner id that the store records for this grant */
    public String owner() {
        return lease.owner();
    }

    /**
     * @return the fencing token: strictly greater than every token granted before for this name;
     *         pass it to the protected resource, which must reject lower tokens
     */
    public long token() {
        return lease.token();
    }

    /**
     * @return the local monotonic deadline of this snapshot (on the client's clock, in nanoseconds):
     *         request send time + granted TTL − drift allowance; prefer {@link #remaining()}
     */
    public long validUntilNanos() {
        return lease.validUntilNanos();
    }

    /** @return the time left until the grant's current deadline (renewals move it); zero when passed */
    public Duration remaining() {
        return lease.remaining();
    }

    /** @return {@code true} while the grant is held: not released, not lost, current deadline not passed */
    public boolean isValid() {
        return lease.isValid();
    }

    /** @return {@code true} once the grant was lost (not renewed in time, or the store says it is not ours); a release is not a loss */
    public boolean isLost() {
        return lost.isDone();
    }

    /**
     * @return a stage that completes when the grant is lost; it never completes when the grant is
     *         released by its owner. Callbacks run on the engine's thread: keep them short and
     *         non-blocking (hand work to your own executor)
     */
    public CompletionStage<Void> whenLost() {
        return lost.minimalCompletionStage();
    }

    /**
     * Listens for an operator's request to let go ({@link Lease#revoked()},
     * {@link io.reactivelocks.admin.LockAdmin#revoke}): cooperative, the holder decides.
     *
     * @return a stage that completes with the request's reason, or with {@code null} when the grant
     *         ends (released or lost) first; callbacks run on the engine's thread, as for {@link #whenLost()}
     */
    public CompletionStage<@Nullable String> whenRevoked() {
        return lease.revoked().toFuture().minimalCompletionStage();
    }

    /**
     * @return the payload stored with this grant (given through {@link LockOptions#payload()} or
     *         set by {@link #updatePayload(String)}), or {@code null} for none
     */
    public @Nullable String payload() {
        return lease.payload();
    }

    /**
     * Replaces the payload stored with this grant, owner- and token-checked on the store; waits
     * until the store confirmed.
     *
     * @param payload at most {@link LockOptions#MAX_PAYLOAD_BYTES} UTF-8 bytes; {@code null} removes it
     * @throws InterruptedException     when interrupted while waiting: the write is cancelled and
     *                                  may or may not have reached the store
     * @throws LockLostException        when this grant is no longer held
     * @throws LockBackendException     when the store fails
     * @throws IllegalArgumentException naming {@code payload} when it is too long or malformed
     * @throws IllegalStateException    when called on a Reactor non-blocking thread
     */
    public void updatePayload(@Nullable String payload) throws InterruptedException {
        var update = lease.updatePayload(payload);
        Await.refuseNonBlocking("BlockingLease.updatePayload");
        Await.interruptibly(update, "updatePayload", v -> { });
    }

    /**
     * Releases the grant on the store (owner-checked: it never removes another owner's lock) and
     * stops its renewal; waits until the store confirmed. Idempotent, callable from any thread.
     * The wait is not interruptible — an interrupted thread still releases, keeps its interrupt
     * status, and waits at most the request timeout. Called on a Reactor non-blocking thread, it
     * starts the release and returns without waiting (errors are then only logged).
     *
     * @throws LockBackendException when the store could not be reached; the grant then expires by its TTL
     */
    public void release() {
        released = true;
        if (Schedulers.isInNonBlockingThread()) {
            Await.releaseOrphan(lease);
            return;
        }
        Await.uninterruptibly(lease.release(), "release");
    }

    /**
     * Releases at the end of the work done under this lease ({@code withLock}'s release): a release
     * the store does not confirm is reported (see {@link io.reactivelocks.Lease#releaseAfterWork()}),
     * not thrown — the lease expires by itself. Waits like {@link #release()}.
     */
    public void releaseAfterWork() {
        released = true;
        if (Schedulers.isInNonBlockingThread()) {
            Await.releaseOrphan(lease);
            return;
        }
        Await.uninterruptibly(lease.releaseAfterWork(), "release");
    }

    /** The same as {@link #release()}, for try-with-resources. */
    @Override
    public void close() {
        release();
    }

    /** @return {@code true} once {@link #release()} was called on this object */
    boolean releaseCalled() {
        return released;
    }

    /** @return the name and token, for logs */
    @Override
    public String toString() {
        return "BlockingLease[name=" + name() + ", token=" + token() + "]";
    }
}
