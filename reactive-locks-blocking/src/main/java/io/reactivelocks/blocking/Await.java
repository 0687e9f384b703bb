package io.reactivelocks.blocking;

import io.reactivelocks.Lease;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.BaseSubscriber;
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
    private static RuntimeException rethrow(Throwable e, String operation) {
        if (e instanceof Error) {
            throw (Error) e;
        }
        if (e instanceof RuntimeException) {
            e.addSuppressed(new Exception("#" + operation + " terminated with an error"));
            return (RuntimeException) e;
        }
        return new IllegalStateException(operation + " failed", e);
    }

    private static final class Waiter<T> extends BaseSubscriber<T> {

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
