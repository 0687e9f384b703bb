package io.reactivelocks.internal;

import java.util.concurrent.RejectedExecutionException;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The one-thread timer scheduler a client (or a concept's engine) owns, and its disposal.
 * Disposing shuts the scheduler's executor down, which takes the executor's locks; a client is
 * often closed on a driver's event loop (the end of its close chain), where waiting on a lock,
 * however briefly, is what this library promises never to do. So the executor is shut down on
 * Reactor's bounded-elastic scheduler when the close ends on such a thread — and before the close completes,
 * so that no timer of the client (a retry, a clean-up) runs after it.
 */
public final class OwnSchedulers {

    private OwnSchedulers() {
    }

    /**
     * @param name the thread's name
     * @return a new single-thread daemon scheduler for one client's timers
     */
    public static Scheduler create(String name) {
        return Schedulers.newSingle(name, true);
    }

    /**
     * @param close     a client's close
     * @param scheduler the client's own scheduler, made by {@link #create}
     * @return {@code close}, then the scheduler disposed on a thread that may block, before the
     *         returned close completes (no timer of the client can fire after it); disposed as well,
     *         without waiting, when {@code close} fails or is cancelled
     */
    public static Mono<Void> closeThenDispose(Mono<Void> close, Scheduler scheduler) {
        Mono<Void> dispose = Mono.defer(() -> onEventLoop()
                ? Mono.<Void>fromRunnable(scheduler::dispose)
                        .subscribeOn(Schedulers.boundedElastic())
                        .onErrorResume(RejectedExecutionException.class, e -> Mono.fromRunnable(scheduler::dispose))
                : Mono.fromRunnable(scheduler::dispose));
        return close
                .onErrorResume(e -> dispose.then(Mono.error(e)))
                .then(dispose)
                .doOnCancel(() -> disposeLater(scheduler));
    }

    /**
     * @return whether this thread is one that must never wait: a Reactor non-blocking thread or a
     *         Netty event loop (Lettuce, Vert.x, jetcd, r2dbc); elsewhere (an application's thread,
     *         bounded-elastic, a test on virtual time) disposing inline is fine and keeps close
     *         synchronous
     */
    static boolean onEventLoop() {
        if (Schedulers.isInNonBlockingThread()) {
            return true;
        }
        for (Class<?> c = Thread.currentThread().getClass(); c != null; c = c.getSuperclass()) {
            if (c.getName().equals("io.netty.util.concurrent.FastThreadLocalThread")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Disposes {@code scheduler} on a thread that may block (inline if that scheduler is gone),
     * without waiting for it.
     *
     * @param scheduler a scheduler made by {@link #create}
     */
    public static void disposeLater(Scheduler scheduler) {
        try {
            Schedulers.boundedElastic().schedule(scheduler::dispose);
        } catch (RejectedExecutionException e) {
            scheduler.dispose();
        }
    }
}
