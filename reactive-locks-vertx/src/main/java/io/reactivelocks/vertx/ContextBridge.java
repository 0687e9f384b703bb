package io.reactivelocks.vertx;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.streams.ReadStream;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Reactor to Vert.x and back without blocking: Reactor signals are handed to a Vert.x
 * {@link Context}, so that Vert.x callbacks run on that context's thread (its event loop for an
 * event-loop context), and Vert.x work is started on a context from Reactor. The {@code Vertx*}
 * types of this package are built on it; use it directly for the parts of the core API they do not
 * cover.
 */
public final class ContextBridge {

    private ContextBridge() {
    }

    /**
     * @param context a Vert.x context
     * @return a Reactor scheduler whose tasks run on that context (for {@code publishOn}); its
     *         delayed tasks are not supported beyond what {@code Schedulers.fromExecutor} offers
     * @throws NullPointerException naming {@code context} when it is null
     */
    public static Scheduler scheduler(Context context) {
        Objects.requireNonNull(context, "context");
        return Schedulers.fromExecutor(task -> context.runOnContext(ignored -> task.run()));
    }

    /**
     * Subscribes to {@code mono} now (a Vert.x future is eager) and completes the returned future
     * on {@code context}: its callbacks run there. An empty {@code Mono} gives {@code null}; an
     * error fails the future with the same exception. A Vert.x future cannot be cancelled: bound the
     * work by the {@code Mono} itself (a wait timeout) or use {@link #toStream}, which can be.
     *
     * @param mono    the publisher to subscribe
     * @param context the context that receives the result
     * @param <T>     the value type
     * @return a Vert.x future of the value
     * @throws NullPointerException naming the argument when one is null
     */
    public static <T> Future<@Nullable T> toFuture(Mono<T> mono, Context context) {
        Objects.requireNonNull(mono, "mono");
        Objects.requireNonNull(context, "context");
        return Future.fromCompletionStage(mono.toFuture(), context);
    }

    /**
     * A lazy {@code Mono} of Vert.x work: on subscribe, {@code work} is called on {@code context}
     * and the {@code Mono} emits its future's result ({@code null} gives an empty {@code Mono}) or
     * its failure. An exception thrown by {@code work}, or a {@code null} future, is an error.
     * Cancelling the {@code Mono} does not stop the Vert.x work, which cannot be cancelled; its
     * result is then dropped.
     *
     * @param work    what to start on the context
     * @param context where to start it
     * @param <T>     the value type
     * @return a {@code Mono} of the work's result
     * @throws NullPointerException naming the argument when one is null
     */
    public static <T> Mono<T> toMono(Supplier<? extends Future<T>> work, Context context) {
        Objects.requireNonNull(work, "work");
        Objects.requireNonNull(context, "context");
        return Mono.create(sink -> context.runOnContext(ignored -> {
            Future<T> future;
            try {
                future = Objects.requireNonNull(work.get(), "the future returned by the work");
            } catch (Throwable t) {
                sink.error(t);
                return;
            }
            future.onComplete(sink::success, sink::error);
        }));
    }

    /**
     * A Vert.x {@link LockStream} over {@code flux} on {@code context}: {@code flux} is subscribed
     * when a handler is first set, its elements and end are delivered on the context with Vert.x
     * back-pressure ({@code pause}/{@code fetch}/{@code resume} become Reactor demand), and
     * {@link LockStream#cancel()} cancels the subscription.
     *
     * @param flux    the publisher to stream
     * @param context the context that receives the elements
     * @param <T>     the element type
     * @return the stream; nothing is subscribed yet
     * @throws NullPointerException naming the argument when one is null
     */
    public static <T> LockStream<T> toStream(Flux<T> flux, Context context) {
        Objects.requireNonNull(flux, "flux");
        Objects.requireNonNull(context, "context");
        return new FluxLockStream<>(flux, context, null);
    }

    /**
     * Like {@link #toStream(Flux, Context)}, with a step run by {@link LockStream#cancel()} before
     * the subscription is cancelled, on the last element delivered (for example releasing the last
     * lease, so that the returned future completes when the release is confirmed).
     *
     * @param flux     the publisher to stream
     * @param context  the context that receives the elements
     * @param onCancel called by {@code cancel()} with the last delivered element, when there is one
     * @param <T>      the element type
     * @return the stream; nothing is subscribed yet
     */
    static <T> LockStream<T> toStream(Flux<T> flux, Context context, Function<? super T, Mono<Void>> onCancel) {
        return new FluxLockStream<>(flux, context, onCancel);
    }

    /**
     * Like {@link #toStream(Flux, Context, Function)}, with a step for each element the publisher
     * emitted that the consumer will not receive because the stream was cancelled (for example
     * giving back a task claim captured but never delivered).
     */
    static <T> LockStream<T> toStream(Flux<T> flux, Context context, @Nullable Function<? super T, Mono<Void>> onCancel,
                                      Consumer<? super T> onDropped) {
        return new FluxLockStream<>(flux, context, onCancel, onDropped);
    }

    /**
     * A lazy {@code Flux} of a Vert.x {@link ReadStream}: on subscribe, {@code work} is called on
     * {@code context} and the stream it returns is paused, then read with Reactor demand
     * ({@code request(n)} becomes {@code fetch(n)}); its end completes the {@code Flux} and its
     * failure errors it. An exception thrown by {@code work}, or a {@code null} stream, is an error.
     * Cancelling the {@code Flux} pauses the stream and removes its handler (a {@link LockStream} is
     * cancelled).
     *
     * @param work    what makes the stream, called on the context
     * @param context where to call it and read the stream
     * @param <T>     the element type
     * @return a {@code Flux} of the stream's elements
     * @throws NullPointerException naming the argument when one is null
     */
    public static <T> Flux<T> toFlux(Supplier<? extends ReadStream<T>> work, Context context) {
        Objects.requireNonNull(work, "work");
        Objects.requireNonNull(context, "context");
        return Flux.create(sink -> context.runOnContext(ignored -> {
            ReadStream<T> stream;
            try {
                stream = Objects.requireNonNull(work.get(), "the stream returned by the work");
            } catch (Throwable t) {
                sink.error(t);
                return;
            }
            stream.pause();
            stream.exceptionHandler(sink::error);
            stream.endHandler(end -> sink.complete());
            stream.handler(sink::next);
            sink.onCancel(() -> context.runOnContext(v -> {
                if (stream instanceof LockStream<T> lockStream) {
                    lockStream.cancel();
                } else {
                    stream.pause();
                    stream.handler(null);
                }
            }));
            sink.onRequest(n -> context.runOnContext(v -> stream.fetch(n)));
        }));
    }
}
