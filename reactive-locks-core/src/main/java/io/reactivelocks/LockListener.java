package io.reactivelocks;

import java.time.Duration;

/**
 * Hooks the engine calls as locks are acquired, renewed, released and lost — for metrics and
 * tracing (the Micrometer module implements it). Every method has a no-op default. Calls are made
 * on whatever thread the event happens on (often an event loop): keep them short and
 * non-blocking. An exception thrown by a listener is logged and otherwise ignored.
 */
public interface LockListener {

    /** A listener that does nothing, the default. */
    LockListener NONE = new LockListener() { };

    /**
     * A lock was granted.
     *
     * @param name   the lock
     * @param token  its fencing token
     * @param waited from subscribe to grant
     */
    default void onAcquired(String name, long token, Duration waited) {
    }

    /**
     * A {@code tryAcquire} found the lock held by someone else.
     *
     * @param name the lock
     */
    default void onContended(String name) {
    }

    /**
     * An acquire ended without a lease: wait timeout, store failure or client closed (not a
     * cancel, which is the subscriber's choice).
     *
     * @param name   the lock
     * @param error  why
     * @param waited from subscribe to failure
     */
    default void onAcquireFailed(String name, Throwable error, Duration waited) {
    }

    /**
     * A renewal was confirmed by the store.
     *
     * @param name  the lock
     * @param token the lease's token
     */
    default void onRenewed(String name, long token) {
    }

    /**
     * A renewal failed; a transient failure is retried while the lease's deadline lasts.
     *
     * @param name  the lock
     * @param token the lease's token
     * @param error why
     */
    default void onRenewalFailed(String name, long token, Throwable error) {
    }

    /**
     * A lease was lost: its deadline passed without a confirmed renewal, or the store said it is
     * no longer ours.
     *
     * @param name   the lock
     * @param token  the lease's token
     * @param reason why
     * @param held   from grant to loss
     */
    default void onLost(String name, long token, String reason, Duration held) {
    }

    /**
     * A lease was released by its owner.
     *
     * @param name  the lock
     * @param token the lease's token
     * @param held  from grant to release
     */
    default void onReleased(String name, long token, Duration held) {
    }
}
