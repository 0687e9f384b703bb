/**
 * Example: a Vert.x 5 service on reactive-locks' Redis backend. {@link
 * io.reactivelocks.examples.vertx.VertxLockService} runs a job at most once per window across all
 * instances (a {@link io.reactivelocks.window.WindowLock} from a {@code RedisLocks.connect} session, claimed from a Vert.x periodic
 * timer) and elects a leader (the holder of a lock's {@code hold} stream), all on its event loop:
 * Reactor publishers are subscribed from the verticle's context and their signals are handed back
 * to that context, never awaited with {@code block()}.
 */
@NullMarked
package io.reactivelocks.examples.vertx;

import org.jspecify.annotations.NullMarked;
