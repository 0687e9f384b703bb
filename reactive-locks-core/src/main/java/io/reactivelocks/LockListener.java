package io.reactivelocks;

import io.reactivelocks.internal.SafeListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import reactor.util.context.ContextView;

/**
 * Hooks the engine calls as locks are acquired, renewed, released and lost — for metrics and
 * tracing (the Micrometer module implements it). Every method has a no-op default. Calls are made
 * on whatever thread the event happens on (often an event loop): keep them short and
 * non-blocking. An exception thrown by a listener is logged and otherwise ignored.
 *
 * <p>Per acquire: when an acquire is subscribed the engine calls {@link #forAcquire} with the
 * subscriber's Reactor context, and sends every later event of that acquire — and of the lease it
 * grants, up to its release or loss — to the listener returned (by default this one). A tracing
 * listener returns an object holding that acquire's spans, parented on the caller's.
 */
public interface LockListener {

    /** A listener that does nothing, the default. */
    LockListener NONE = new LockListener() { };

    /**
     * Combines listeners: each event goes to each of them in the order given, and an exception
     * thrown by one is logged and keeps neither the others nor the engine from going on.
     *
     * @param listeners the listeners; none null ({@link #NONE} entries are left out)
     * @return one listener calling them all; {@link #NONE} when none is left
     * @throws NullPointerException when {@code listeners} or one of them is null
     */
    static LockListener composite(LockListener... listeners) {
        Objects.requireNonNull(listeners, "listeners");
        List<LockListener> called = new ArrayList<>();
        for (int i = 0; i < listeners.length; i++) {
            if (Objects.requireNonNull(listeners[i], "listeners[" + i + "]") != NONE) {
                called.add(listeners[i]);
            }
        }
        return called.isEmpty() ? NONE : new SafeListener(called);
    }

    /**
     * A store session is handing out a concept made with options carrying this listener
     * ({@link LockOptions.Builder#listener}): the listener returned gets every event of that
     * concept. Events carry no concept of their own — a listener that tells concepts apart (the
     * Micrometer one tags its meters with it) returns a listener for that concept here. Called
     * once per concept handed out, on the caller's thread.
     *
     * @param concept the concept handed out
     * @return the listener for that concept's events; the default returns {@code this}
     */
    default LockListener forConcept(Concept concept) {
        return this;
    }

    /**
     * An acquire ({@code acquire}, {@code tryAcquire}, {@code hold}, {@code withLock}) was
     * subscribed. The listener returned gets every later event of this acquire and of the lease it
     * grants; it may carry state for this acquire alone, such as a tracing span whose parent is
     * the one in {@code context}. Called on the subscribing thread, before the first request.
     *
     * @param name    the lock
     * @param context the subscriber's Reactor context
     * @return the listener for this acquire's events; the default returns {@code this}
     */
    default LockListener forAcquire(String name, ContextView context) {
        return this;
    }

    /**
     * The subscriber cancelled an acquire before it was granted (nothing is left on the store:
     * the engine cleans up).
     *
     * @param name   the lock
     * @param waited from subscribe to cancel
     */
    default void onAcquireCancelled(String name, Duration waited) {
    }

    /**
     * A renewal request for a held lease is being sent to the store (stores whose leases are
     * renewed one by one; a session-renewed store — etcd, ZooKeeper — confirms its leases with
     * {@link #onRenewed} only). {@link #onRenewed} or {@link #onRenewalFailed} follows, unless
     * the lease ends first.
     *
     * @param name  the lock
     * @param token the lease's token
     */
    default void onRenewalStarted(String name, long token) {
    }

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

    /**
     * The release of a lease whose scoped body ({@code withLock}) had ended was not confirmed by the
     * store (it failed or did not answer within the request timeout). Renewal has stopped, so the
     * lease expires by itself at its deadline, and its token is fenced; the body's result is passed
     * on all the same.
     *
     * @param name  the lock
     * @param token the lease's token
     * @param error why the release was not confirmed
     */
    default void onReleaseUnconfirmed(String name, long token, Throwable error) {
    }
}
