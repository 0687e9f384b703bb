package io.reactivelocks.blocking;

import io.reactivelocks.Lease;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The one way this module waits for the engine: subscribe, then park the calling thread on a
 * {@link CompletableFuture} (a {@code LockSupport} park, so a virtual thread unmounts and frees its
 * carrier; no monitor, no {@code Object.wait}). An interrupt cancels the subscription, and a value
 * that arrives at that very moment is handed to a clean-up instead of being dropped.
 */
final class Await {

    private static final Logger LOG = Loggers.getLogger(Await.class);

    private Await() {
    }

    /**
     * @param operation what the caller is doing, for the message
     * @throws IllegalStateException when the calling thread is a Reactor non-blocking thread
     */
    static void refuseNonBlocking(String operation) {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException(operation + " blocks the calling thread, and '" + Thread.currentThread().getName()
                    + "' is a Reactor non-blocking thread: use the reactive API (LockClient, Semaphore) there,"
                    + " or call from a virtual thread or another thread that may block");
        }
    }

    /**
     * Subscribes to {@code source} and waits, interruptibly, for its value or its end.
     *
     * @param source    the operation; subscribed once
     * @param operation what the caller is doing, for errors
     * @param orphan    gets a value that arrived while the wait was being abandoned (to release it)
     * @return the value, or {@code null} when {@code source} completed empty
     * @throws InterruptedException when the thread is interrupted before the value arrives: the
     *                              subscription is cancelled first (the interrupt status is cleared)
     */
    static <T> @Nullable T interruptibly(Mono<T> source, String operation, Consumer<? super T> orphan)
            throws InterruptedException {
        Waiter<T> waiter = new Waiter<>(orphan);
        source.subscribe(waiter);
        try {
            return waiter.result.get();
        } catch (InterruptedException e) {
            waiter.abandon();
            throw e;
        } catch (ExecutionException e) {
            throw rethrow(e.getCause(), operation);
        }
    }

    /**
     * Subscribes to {@code source} and waits for its end without reacting to interrupts (the
     * interrupt status is kept): for releases, which must finish even in an interrupted thread
     * and are bounded by the request timeout.
     */
    static <T> @Nullable T uninterruptibly(Mono<T> source, String operation) {
        Waiter<T> waiter = new Waiter<>(v -> { });
        source.subscribe(waiter);
        try {
            return waiter.result.join();
        } catch (CompletionException e) {
            throw rethrow(e.getCause(), operation);
        }
    }

    /**
     * Subscribes to {@code source} and hands each element to {@code body} on the calling thread,
     * until the stream ends (the call returns), fails (its error is thrown), the body returns
     * {@code false} or throws, or the thread is interrupted. Unless the stream ended by itself,
     * {@code onStop} gets the last element handed to the body (when there was one) and then the
     * subscription is cancelled.
     *
     * @param source     the stream; subscribed once
     * @param operation  what the caller is doing, for errors
     * @param oneAtATime {@code true} to request the next element only after the body took the last
     *                   one (for streams whose demand does work, such as captures); {@code false}
     *                   to request everything and queue it (for state and renewal streams)
     * @param body       the work per element
     * @param onStop     called with the last element when the caller stops the stream, or {@code null}
     * @param orphan     gets the elements that arrived but were not handed to the body when the
     *                   caller stopped the stream (to release them), or {@code null}
     * @throws InterruptedException when interrupted while waiting for an element: the stream is
     *                              stopped as described and the interrupt status cleared
     */
    @SuppressWarnings("unchecked")
    static <T, E extends Exception> void each(Flux<T> source, String operation, boolean oneAtATime,
                                              StreamBody<? super T, E> body, @Nullable Consumer<? super T> onStop,
                                              @Nullable Consumer<? super T> orphan)
            throws E, InterruptedException {
        Elements<T> elements = new Elements<>(oneAtATime);
        source.subscribe(elements);
        T last = null;
        try {
            while (true) {
                Object signal = elements.signals.take();
                if (signal == Elements.COMPLETE) {
                    return;
                }
                if (signal instanceof Failure) {
                    throw rethrow(((Failure) signal).error(), operation);
                }
                last = (T) signal;
                if (!body.accept(last)) {
                    stop(elements, onStop, last, orphan);
                    return;
                }
                if (oneAtATime) {
                    elements.request(1);
                }
            }
        } catch (InterruptedException | RuntimeException | Error e) {
            if (!elements.ended) {
                stop(elements, onStop, last, orphan);
            }
            throw e;
        } catch (Exception e) {
            stop(elements, onStop, last, orphan);
            throw e;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> void stop(Elements<T> elements, @Nullable Consumer<? super T> onStop, @Nullable T last,
                                 @Nullable Consumer<? super T> orphan) {
        try {
            if (onStop != null && last != null) {
                onStop.accept(last);
            }
        } finally {
            elements.cancel();
            if (orphan != null) {
                for (Object signal = elements.signals.poll(); signal != null; signal = elements.signals.poll()) {
                    if (signal != Elements.COMPLETE && !(signal instanceof Failure)) {
                        orphan.accept((T) signal);
                    }
                }
            }
        }
    }

    /**
     * Subscribes to {@code source} and waits, interruptibly, for its first element, leaving the
     * subscription running (its later elements are dropped): for streams whose subscription is the
     * hold itself, such as a campaign.
     *
     * @param source    the stream; subscribed once
     * @param operation what the caller is doing, for errors
     * @return the first element, or {@code null} when the stream ended without one; and the subscription
     * @throws InterruptedException when interrupted before the first element: the subscription is cancelled
     */
    static <T> First<T> first(Flux<T> source, String operation) throws InterruptedException {
        CompletableFuture<T> first = new CompletableFuture<>();
        BaseSubscriber<T> subscriber = new BaseSubscriber<>() {
            @Override
            protected void hookOnNext(T value) {
                first.complete(value);
            }

            @Override
            protected void hookOnComplete() {
                first.complete(null);
            }

            @Override
            protected void hookOnError(Throwable error) {
                first.completeExceptionally(error);
            }
        };
        source.subscribe(subscriber);
        try {
            return new First<>(first.get(), subscriber);
        } catch (InterruptedException e) {
            subscriber.cancel();
            throw e;
        } catch (ExecutionException e) {
            throw rethrow(e.getCause(), operation);
        }
    }

    /**
     * The first element of a stream and the subscription still running.
     *
     * @param value        the first element, or {@code null} when the stream ended without one
     * @param subscription cancel it to end the stream
     */
    record First<T>(@Nullable T value, Disposable subscription) {
    }

    /**
     * Closes: waits for {@code close} without reacting to interrupts; on a Reactor non-blocking
     * thread, starts it and returns.
     */
    static void closing(Mono<Void> close, String operation) {
        if (Schedulers.isInNonBlockingThread()) {
            close.subscribe(null, e -> LOG.warn("{} failed: {}", operation, e.toString()));
            return;
        }
        uninterruptibly(close, operation);
    }

    /** Releases, in the background, a lease that nobody will use (best effort; it expires anyway). */
    static void releaseOrphan(Lease lease) {
        lease.release().subscribe(null, e -> LOG.warn("releasing the lease on '{}' (token {}) after an interrupt failed;"
                + " it expires by its TTL: {}", lease.name(), lease.token(), e.toString()));
    }

    /** Releases, in the background, leases that nobody will use. */
    static void releaseOrphans(List<Lease> leases) {
        leases.forEach(Await::releaseOrphan);
    }

    /*
     * The engine's own exception, as Reactor's block() does it: the same instance, unwrapped, with
     * a suppressed marker whose stack trace shows the calling thread.
     */
    static RuntimeException rethrow(Throwable e, String operation) {
        if (e instanceof Error) {
            throw (Error) e;
        }
        if (e instanceof RuntimeException) {
            e.addSuppressed(new Exception("#" + operation + " terminated with an error"));
            return (RuntimeException) e;
        }
        return new IllegalStateException(operation + " failed", e);
    }

    /** An error of a stream, as queued for {@link #each}. */
    private record Failure(Throwable error) {
    }

    /** Queues a stream's signals for the thread that runs {@link #each}. */
    private static final class Elements<T> extends BaseSubscriber<T> {
        static final Object COMPLETE = new Object();

        final BlockingQueue<Object> signals = new LinkedBlockingQueue<>();
        private final boolean oneAtATime;
        volatile boolean ended;

        Elements(boolean oneAtATime) {
            this.oneAtATime = oneAtATime;
        }

        @Override
        protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
            subscription.request(oneAtATime ? 1 : Long.MAX_VALUE);
        }

        @Override
        protected void hookOnNext(T value) {
            signals.add(value);
        }

        @Override
        protected void hookOnComplete() {
            ended = true;
            signals.add(COMPLETE);
        }

        @Override
        protected void hookOnError(Throwable error) {
            ended = true;
            signals.add(new Failure(error));
        }
    }

    static final class Waiter<T> extends BaseSubscriber<T> {

        /** Completed exceptionally by {@link #abandon()}; never thrown to a caller. */
        private static final Exception ABANDONED = new Exception("wait abandoned", null, false, false) { };

        final CompletableFuture<T> result = new CompletableFuture<>();
        private final Consumer<? super T> orphan;

        Waiter(Consumer<? super T> orphan) {
            this.orphan = orphan;
        }

        @Override
        protected void hookOnNext(T value) {
            if (!result.complete(value)) {
                orphan.accept(value);
            }
        }

        @Override
        protected void hookOnComplete() {
            result.complete(null);
        }

        @Override
        protected void hookOnError(Throwable error) {
            result.completeExceptionally(error);
        }

        /** Exactly one of this and {@link #hookOnNext} sees a value that raced the abandon. */
        void abandon() {
            if (!result.completeExceptionally(ABANDONED) && !result.isCompletedExceptionally()) {
                T value = result.join();
                if (value != null) {
                    orphan.accept(value);
                }
            }
            cancel();
        }
    }
}
