package io.reactivelocks.examples.demo;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * One allowance for the demo's tests only: the frozen instance runs its timers on a plain
 * {@code ScheduledThreadPoolExecutor} (a thread the demo may park, which a Reactor scheduler's
 * non-blocking thread may not). Cancelling one of those timers from another thread — a release
 * disposing the lease's renewal interval on an event loop — removes it from the executor's queue
 * under the queue's lock, which parks for a moment when the executor's own thread holds it.
 * That is the same short in-memory lock as the {@code offer} and {@code take} Reactor already allows.
 */
public final class DemoBlockHoundIntegration implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue", "remove");
    }
}
