package io.reactivelocks.internal;

import java.util.concurrent.RejectedExecutionException;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The one-thread timer scheduler a client (or a concept's engine) owns, and its disposal.
 * Disposing shuts the scheduler's executor down, which takes the executor's locks; a client is
 * often closed on a driver's event loop (the end of its close chain), where waiting on a lock,
 * however briefly, is what this library promises never to do. So the executor is shut down on
 * Reactor's bounded-elastic scheduler, a thread that may block.
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
     * Disposes {@code scheduler} on a thread that may block (inline if that scheduler is gone).
     *
     * @param scheduler a scheduler made by {@link #create}
     */
    public static void dispose(Scheduler scheduler) {
        try {
            Schedulers.boundedElastic().schedule(scheduler::dispose);
        } catch (RejectedExecutionException e) {
            scheduler.dispose();
        }
    }
}
