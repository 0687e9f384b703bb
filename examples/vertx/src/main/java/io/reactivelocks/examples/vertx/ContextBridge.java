package io.reactivelocks.examples.vertx;

import io.vertx.core.Context;
import io.vertx.core.Future;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** Reactor to Vert.x without blocking: signals are handed to a Vert.x context's event loop. */
final class ContextBridge {

    private ContextBridge() {
    }

    /**
     * @param context a Vert.x context
     * @return a Reactor scheduler whose tasks run on that context (for {@code publishOn})
     */
    static Scheduler scheduler(Context context) {
        return Schedulers.fromExecutor(task -> context.runOnContext(ignored -> task.run()));
    }

    /**
     * Subscribes to {@code mono} now and completes the returned future on {@code context}; an
     * empty {@code Mono} gives {@code null}.
     *
     * @param mono    the publisher to subscribe
     * @param context the context that receives the result
     * @param <T>     the value type
     * @return a Vert.x future of the value
     */
    static <T> Future<T> toFuture(Mono<T> mono, Context context) {
        return Future.fromCompletionStage(mono.toFuture(), context);
    }
}
