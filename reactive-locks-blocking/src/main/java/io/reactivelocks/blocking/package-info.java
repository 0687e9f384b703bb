/**
 * A blocking API over the reactive engine, for code on threads — virtual threads above all:
 * {@link io.reactivelocks.blocking.BlockingStore} (one session, every concept),
 * {@link io.reactivelocks.blocking.BlockingLocks} ({@code withLock}, {@code acquire} with
 * try-with-resources), {@link io.reactivelocks.blocking.BlockingSemaphore}, the
 * {@link io.reactivelocks.blocking.BlockingLease} they hand out, and the read-write lock, multi-lock,
 * window lock, leader election, fenced values and task queue in the same shape. Scoped verbs run
 * their body on the calling thread; a core stream becomes a {@link io.reactivelocks.blocking.StreamBody}
 * callback on it. Waits park the calling thread
 * without holding a monitor, so virtual threads unmount while they wait; an interrupt cancels the
 * wait and leaves nothing held. Never call it on a Reactor non-blocking thread.
 */
@NullMarked
package io.reactivelocks.blocking;

import org.jspecify.annotations.NullMarked;
