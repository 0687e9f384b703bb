package io.reactivelocks.vertx;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Which context receives the results of a call: the one bound with {@code on(Context)}, else the
 * context current when the method is called ({@link Vertx#getOrCreateContext()}: on a Vert.x thread
 * its own context, elsewhere a context of {@code vertx}).
 */
record CallerContext(Vertx vertx, @Nullable Context bound) {

    CallerContext {
        Objects.requireNonNull(vertx, "vertx");
    }

    CallerContext on(Context context) {
        Objects.requireNonNull(context, "context");
        if (context.owner() != vertx) {
            throw new IllegalArgumentException("context must belong to " + vertx + ": " + context);
        }
        return new CallerContext(vertx, context);
    }

    Context get() {
        return bound != null ? bound : vertx.getOrCreateContext();
    }

    <T> Future<@Nullable T> future(Mono<T> mono) {
        return ContextBridge.toFuture(mono, get());
    }

    <T> LockStream<T> stream(Flux<T> flux) {
        return ContextBridge.toStream(flux, get());
    }
}
