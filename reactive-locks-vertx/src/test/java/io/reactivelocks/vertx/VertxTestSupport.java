package io.reactivelocks.vertx;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Calls made on a Vert.x context whose results must come back on that same context. Blocking methods are for test threads only. */
final class VertxTestSupport {

    static final long STEP_SECONDS = 10;

    private VertxTestSupport() {
    }

    /**
     * @return options under which Vert.x's blocked-thread checker looks every 100 ms for an event
     *         loop busy for more than 200 ms (its warnings are captured by {@link CapturingLogDelegateFactory})
     */
    static VertxOptions strictOptions() {
        return new VertxOptions()
                .setEventLoopPoolSize(2)
                .setBlockedThreadCheckInterval(100)
                .setBlockedThreadCheckIntervalUnit(TimeUnit.MILLISECONDS)
                .setMaxEventLoopExecuteTime(200)
                .setMaxEventLoopExecuteTimeUnit(TimeUnit.MILLISECONDS)
                .setWarningExceptionTime(150)
                .setWarningExceptionTimeUnit(TimeUnit.MILLISECONDS);
    }

    /**
     * Calls {@code op} on {@code context} and waits for its future, which must complete on that
     * context's event loop.
     *
     * @return the future's result
     * @throws Exception the future's failure, or an {@link AssertionError} when it completed elsewhere
     */
    static <T> T call(Context context, Supplier<? extends Future<T>> op) throws Exception {
        CompletableFuture<T> out = new CompletableFuture<>();
        context.runOnContext(v -> op.get().onComplete(ar -> {
            if (Vertx.currentContext() != context || !Context.isOnEventLoopThread()) {
                out.completeExceptionally(new AssertionError("completed on " + Vertx.currentContext()
                        + " (" + Thread.currentThread().getName() + ") instead of " + context));
            } else if (ar.succeeded()) {
                out.complete(ar.result());
            } else {
                out.completeExceptionally(ar.cause());
            }
        }));
        return join(out);
    }

    /** Waits for a future from a test thread, failing after {@value #STEP_SECONDS} s. */
    static <T> T join(Future<T> future) throws Exception {
        return join(future.toCompletionStage().toCompletableFuture());
    }

    static <T> T join(CompletableFuture<T> future) throws Exception {
        try {
            return future.get(STEP_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw e;
        }
    }

    /** Asserts the caller runs on {@code context}'s event loop. */
    static void assertOn(Context context) {
        assertThat(Vertx.currentContext()).as("current context").isSameAs(context);
        assertThat(Context.isOnEventLoopThread()).as("on an event loop thread").isTrue();
    }
}
