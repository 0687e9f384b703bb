/**
 * A blocking API over the reactive engine, for code on threads — virtual threads above all:
 * {@link io.reactivelocks.blocking.BlockingLocks} ({@code withLock}, {@code acquire} with
 * try-with-resources), {@link io.reactivelocks.blocking.BlockingSemaphore} and the
 * {@link io.reactivelocks.blocking.BlockingLease} they hand out. Waits park the calling thread
 * without holding a monitor, so virtual threads unmount while they wait; an interrupt cancels the
 * wait and leaves nothing held. Never call it on a Reactor non-blocking thread.
 */
@NullMarked
package io.reactivelocks.blocking;

import org.jspecify.annotations.NullMarked;
