package io.reactivelocks.vertx;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * {@link LockStream} over a {@code Flux}. Every field below the subscriber's own is read and written
 * on the context's thread only: the public methods and the Reactor signals hop onto the context
 * (inline when already on it), so the state needs no locks, and signals keep their order (a
 * context runs its tasks in order).
 */
final class FluxLockStream<T> implements LockStream<T> {

    private final Flux<T> source;
    private final Context context;
    private final @Nullable Function<? super T, Mono<Void>> onCancel;
    private final @Nullable Consumer<? super T> onDropped;
    private final Upstream upstream = new Upstream();

    private @Nullable Handler<T> handler;
    private @Nullable Handler<Void> endHandler;
    private @Nullable Handler<Throwable> exceptionHandler;
    /** Elements the consumer may still receive; {@code Long.MAX_VALUE} = flowing. */
    private long demand = Long.MAX_VALUE;
    /** Elements requested upstream and not received yet; {@code Long.MAX_VALUE} = unbounded. */
    private long requested;
    private final ArrayDeque<T> pending = new ArrayDeque<>();
    private @Nullable T last;
    private boolean subscribed;
    private boolean upstreamDone;
    private @Nullable Throwable failure;
    private boolean done;
    /** The publisher completed and every element was delivered (not cancelled, not failed). */
    private boolean ended;
    private boolean endDelivered;

    FluxLockStream(Flux<T> source, Context context, @Nullable Function<? super T, Mono<Void>> onCancel) {
        this(source, context, onCancel, null);
    }

    FluxLockStream(Flux<T> source, Context context, @Nullable Function<? super T, Mono<Void>> onCancel,
                   @Nullable Consumer<? super T> onDropped) {
        this.source = source;
        this.context = context;
        this.onCancel = onCancel;
        this.onDropped = onDropped;
    }

    /** Hands an element the consumer will never receive (the stream was cancelled) to {@code onDropped}. */
    private void dropped(T value) {
        Consumer<? super T> d = onDropped;
        if (d != null) {
            d.accept(value);
        }
    }

    private void onContext(Runnable task) {
        if (Vertx.currentContext() == context) {
            task.run();
        } else {
            context.runOnContext(ignored -> task.run());
        }
    }

    /** The subscriber to the publisher: hands every signal to the context. */
    private final class Upstream extends BaseSubscriber<T> {

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            onContext(FluxLockStream.this::requestMore);
        }

        @Override
        protected void hookOnNext(T value) {
            onContext(() -> {
                if (requested != Long.MAX_VALUE) {
                    requested--;
                }
                if (!done) {
                    pending.add(value);
                    drain();
                } else {
                    dropped(value);
                }
            });
        }

        @Override
        protected void hookOnComplete() {
            onContext(() -> {
                upstreamDone = true;
                drain();
            });
        }

        @Override
        protected void hookOnError(Throwable error) {
            onContext(() -> {
                upstreamDone = true;
                failure = error;
                drain();
            });
        }

        boolean hasSubscription() {
            return upstream() != null;
        }
    }

    // ---- on the context ----

    private void drain() {
        while (!done && demand > 0 && !pending.isEmpty()) {
            T value = pending.poll();
            if (demand != Long.MAX_VALUE) {
                demand--;
            }
            last = value;
            Handler<T> h = handler;
            if (h != null) {
                h.handle(value);
            }
        }
        if (!done && upstreamDone && pending.isEmpty()) {
            done = true;
            Throwable f = failure;
            if (f != null) {
                Handler<Throwable> eh = exceptionHandler;
                if (eh != null) {
                    eh.handle(f);
                } else if (f instanceof RuntimeException r) {
                    throw r; // the context reports it as unhandled
                } else if (f instanceof Error e) {
                    throw e;
                } else {
                    throw new IllegalStateException(f);
                }
            } else {
                ended = true;
                deliverEnd();
            }
            return;
        }
        requestMore();
    }

    private void deliverEnd() {
        Handler<Void> h = endHandler;
        if (h != null && !endDelivered) {
            endDelivered = true;
            h.handle(null);
        }
    }

    private void requestMore() {
        if (!subscribed || done || upstreamDone || requested == Long.MAX_VALUE || !upstream.hasSubscription()) {
            return;
        }
        if (demand == Long.MAX_VALUE) {
            requested = Long.MAX_VALUE;
            upstream.request(Long.MAX_VALUE);
            return;
        }
        long want = demand - pending.size() - requested;
        if (want > 0) {
            requested += want;
            upstream.request(want);
        }
    }

    private Mono<Void> cancelOnContext() {
        if (done) {
            return Mono.empty();
        }
        done = true;
        for (T value = pending.poll(); value != null; value = pending.poll()) {
            dropped(value);
        }
        handler = null;
        T l = last;
        Mono<Void> step = onCancel != null && l != null ? onCancel.apply(l) : Mono.empty();
        if (!subscribed) {
            subscribed = true; // never subscribe later
            return step;
        }
        return step.doFinally(signal -> upstream.dispose());
    }

    // ---- Vert.x side ----

    @Override
    public Future<Void> cancel() {
        Mono<Void> cancelled = Mono.<Mono<Void>>create(sink -> onContext(() -> sink.success(cancelOnContext())))
                .flatMap(step -> step);
        return ContextBridge.toFuture(cancelled, context).mapEmpty();
    }

    @Override
    public boolean isDone() {
        return done;
    }

    @Override
    public LockStream<T> exceptionHandler(@Nullable Handler<Throwable> handler) {
        onContext(() -> exceptionHandler = handler);
        return this;
    }

    @Override
    public LockStream<T> handler(@Nullable Handler<T> handler) {
        if (handler == null) {
            cancel();
            return this;
        }
        onContext(() -> {
            if (done) {
                return;
            }
            this.handler = handler;
            if (!subscribed) {
                subscribed = true;
                source.subscribe(upstream);
            } else {
                drain();
            }
        });
        return this;
    }

    @Override
    public LockStream<T> pause() {
        onContext(() -> demand = 0);
        return this;
    }

    @Override
    public LockStream<T> resume() {
        return fetch(Long.MAX_VALUE);
    }

    @Override
    public LockStream<T> fetch(long amount) {
        if (amount < 0) {
            throw new IllegalArgumentException("amount must not be negative: " + amount);
        }
        onContext(() -> {
            demand = Operators.addCap(demand, amount);
            if (!done) {
                drain();
            }
        });
        return this;
    }

    @Override
    public LockStream<T> endHandler(@Nullable Handler<Void> endHandler) {
        onContext(() -> {
            this.endHandler = endHandler;
            if (ended) {
                deliverEnd();
            }
        });
        return this;
    }
}
