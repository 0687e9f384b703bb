/**
 * Vert.x 5 API of reactive-locks: {@link io.reactivelocks.vertx.VertxLockStore} wraps a store
 * session and hands out the Vert.x view of every concept — {@link io.reactivelocks.vertx.VertxLocks},
 * {@link io.reactivelocks.vertx.VertxSemaphore}, {@link io.reactivelocks.vertx.VertxReadWriteLock},
 * {@link io.reactivelocks.vertx.VertxMultiLock}, {@link io.reactivelocks.vertx.VertxWindowLock},
 * {@link io.reactivelocks.vertx.VertxLeaderElection}, {@link io.reactivelocks.vertx.VertxFencedValues}
 * and {@link io.reactivelocks.vertx.VertxTaskQueue} — each of which wraps the core type and hands its
 * results to the caller's Vert.x context as {@code Future}s and cancellable
 * {@link io.reactivelocks.vertx.LockStream}s; {@link io.reactivelocks.vertx.ContextBridge} is the
 * Reactor-to-Vert.x bridge they are built on. There is no second engine: waiting, renewal, fencing
 * and clean-up are the core's, and nothing blocks a thread.
 */
@NullMarked
package io.reactivelocks.vertx;

import org.jspecify.annotations.NullMarked;
