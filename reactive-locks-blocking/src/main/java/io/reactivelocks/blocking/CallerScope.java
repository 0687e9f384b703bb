package io.reactivelocks.blocking;

import io.reactivelocks.LockLostException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * Runs a blocking body on the calling thread inside a core scoped operation ({@code withLocks},
 * {@code withLock} of a read-write side, {@code withPermit}, {@code process}): the core operation
 * gets a body whose {@code Mono} completes when the calling thread's body ends, so acquiring,
 * renewing, loss detection and the release (or completion) are the core's own. When the core
 * cancels that {@code Mono} — the grant was lost — the calling thread is interrupted while its body
 * runs; the call then throws what the core ends with ({@link LockLostException}).
 */
final class CallerScope {

    private static final Exception NOT_GRANTED = new Exception("ended before the grant", null, false, false) { };

    private CallerScope() {
    }

    /**
     * @param scoped    the core operation, given the body it must run under its grant
     * @param body      the work, run on the calling thread
     * @param operation what the caller is doing, for errors
     * @return the body's result as the core passed it on
     * @throws E                    the body's exception, unchanged
     * @throws InterruptedException when interrupted before the grant: the core operation is cancelled
     *                              (which releases whatever it took) and the body never runs
     */
    static <G, T, E extends Exception> T run(Function<Function<G, Mono<T>>, Mono<T>> scoped, GrantBody<? super G, T, E> body,
                                             String operation) throws E, InterruptedException {
        CompletableFuture<G> granted = new CompletableFuture<>();
        CompletableFuture<T> done = new CompletableFuture<>();
        Watch watch = new Watch(Thread.currentThread());
        Mono<T> whole = scoped.apply(grant -> {
            granted.complete(grant);
            return Mono.fromFuture(done).doOnCancel(watch::lost);
        });
        Await.Waiter<T> waiter = new Await.Waiter<>(v -> { });
        waiter.result.whenComplete((v, e) -> granted.completeExceptionally(NOT_GRANTED));
        whole.subscribe(waiter);
        G grant;
        try {
            grant = granted.get();
        } catch (InterruptedException e) {
            waiter.abandon();
            throw e;
        } catch (ExecutionException e) {
            return outcome(waiter, null, operation);
        }
        T result = null;
        Throwable failure = null;
        if (watch.start()) {
            try {
                result = body.apply(grant);
            } catch (Exception | Error e) {
                failure = e;
            }
        }
        watch.finish();
        if (failure == null) {
            done.complete(result);
        } else {
            done.completeExceptionally(failure);
        }
        return outcome(waiter, failure, operation);
    }

    /* What the core ended with; the body's own exception is thrown as it was. */
    private static <T, E extends Exception> T outcome(Await.Waiter<T> waiter, Throwable failure, String operation) throws E {
        T value;
        try {
            value = waiter.result.join();
        } catch (CompletionException e) {
            Throwable error = e.getCause();
            if (failure != null && error == failure) {
                throw LeaseScope.<E>asThrown(failure);
            }
            if (failure != null && error != null) {
                error.addSuppressed(failure);
            }
            throw Await.rethrow(error, operation);
        }
        if (failure != null) {
            throw LeaseScope.<E>asThrown(failure);
        }
        return value;
    }

    /** Interrupts the body's thread when the core cancels the body, only while the body runs. */
    private static final class Watch {
        private static final int WAITING = 0;
        private static final int RUNNING = 1;
        private static final int INTERRUPTING = 2;
        private static final int INTERRUPTED = 3;
        private static final int DONE = 4;
        private static final int CANCELLED_EARLY = 5;

        private final Thread thread;
        private final AtomicInteger state = new AtomicInteger(WAITING);

        Watch(Thread thread) {
            this.thread = thread;
        }

        void lost() {
            if (state.compareAndSet(WAITING, CANCELLED_EARLY)) {
                return;
            }
            if (state.compareAndSet(RUNNING, INTERRUPTING)) {
                try {
                    thread.interrupt();
                } finally {
                    state.set(INTERRUPTED);
                }
            }
        }

        /** @return {@code true} when the body may run (the core did not cancel it before it started) */
        boolean start() {
            return state.compareAndSet(WAITING, RUNNING);
        }

        /** Ends the watch; clears an interrupt it caused. */
        void finish() {
            if (state.compareAndSet(RUNNING, DONE) || state.get() == CANCELLED_EARLY) {
                return;
            }
            while (state.get() == INTERRUPTING) {
                Thread.onSpinWait();
            }
            Thread.interrupted();
        }
    }
}
