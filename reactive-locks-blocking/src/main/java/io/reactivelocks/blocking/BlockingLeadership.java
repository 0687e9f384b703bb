package io.reactivelocks.blocking;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.election.Leadership;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * This process leads an election, for blocking code: the view of a core {@link Leadership} that
 * {@link BlockingLeaderElection#campaign} hands to its body.
 */
public final class BlockingLeadership {

    private final Leadership leadership;
    private final BlockingLease lease;

    BlockingLeadership(Leadership leadership, BlockingLease lease) {
        this.leadership = Objects.requireNonNull(leadership, "leadership");
        this.lease = Objects.requireNonNull(lease, "lease");
    }

    /** @return the engine's view of this term */
    public Leadership leadership() {
        return leadership;
    }

    /** @return the election name */
    public String name() {
        return leadership.name();
    }

    /** @return the lease behind the leadership (its token fences the leader's writes) */
    public BlockingLease lease() {
        return lease;
    }

    /** @return the value observers see now: the campaign's value or the last completed {@link #proclaim} */
    public String value() {
        return leadership.value();
    }

    /** @return the fencing token of this term: larger than every earlier leader's */
    public long token() {
        return leadership.token();
    }

    /** @return the owner id of this term's lease */
    public String owner() {
        return leadership.owner();
    }

    /** @return {@code true} while this term lasts (not resigned, not lost, deadline not passed) */
    public boolean isValid() {
        return leadership.isValid();
    }

    /** @return {@code true} once this term was lost (not when resigned) */
    public boolean isLost() {
        return lease.isLost();
    }

    /** @return a stage that completes when this term is lost (not when resigned); keep its callbacks short */
    public CompletionStage<Void> whenLost() {
        return lease.whenLost();
    }

    /**
     * Publishes a new value while leading; waits until the store confirmed.
     *
     * @param value the new value, at most {@link io.reactivelocks.LockOptions#MAX_PAYLOAD_BYTES} UTF-8 bytes
     * @throws InterruptedException     when interrupted while waiting: the write may have reached the store
     * @throws LockLostException        when this term is over
     * @throws LockBackendException     when the store fails
     * @throws NullPointerException     naming {@code value} when it is null
     * @throws IllegalArgumentException naming {@code value} when it is too long or malformed
     * @throws IllegalStateException    when called on a Reactor non-blocking thread
     */
    public void proclaim(String value) throws InterruptedException {
        var proclaim = leadership.proclaim(value);
        Await.refuseNonBlocking("BlockingLeadership.proclaim");
        Await.interruptibly(proclaim, "proclaim", v -> { });
    }

    /**
     * Gives leadership up (releases the lease) and waits until the store confirmed; the
     * campaign's body keeps running until it returns. Idempotent, not interruptible.
     *
     * @throws LockBackendException when the store could not be reached (the lease expires by its TTL)
     */
    public void resign() {
        lease.release();
    }

    /** @return the election name and token, for logs */
    @Override
    public String toString() {
        return "BlockingLeadership[name=" + name() + ", token=" + token() + "]";
    }
}
