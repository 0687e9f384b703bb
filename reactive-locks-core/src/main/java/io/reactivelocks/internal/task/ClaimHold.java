package io.reactivelocks.internal.task;

import io.reactivelocks.LockException;
import io.reactivelocks.internal.EngineTimers;
import io.reactivelocks.internal.RenewalScheduler;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.task.ClaimRef;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One subscription of {@link TaskQueue#hold}: a held claim, renewed in the queue's
 * {@link RenewalScheduler} batches of its queue and claim time (so claims captured and held together
 * share their renewal calls) and watched by a local deadline, like a lock's lease. It emits each
 * renewed claim; it completes when the claim is lost — the store said it is not held any more, a
 * renewal failed for good, or the deadline passed without a confirmed renewal (transient failures
 * are retried with the backoff until then) — and when the queue closes. Cancelling takes it out of its
 * batch.
 */
final class ClaimHold extends RenewalScheduler.Member<ClaimRef> {

    private static final Logger LOG = Loggers.getLogger(ClaimHold.class);

    private final DefaultTaskQueue tasks;
    private final TaskClaim claim;
    private final ClaimRef ref;
    private final FluxSink<TaskClaim> sink;
    private final long intervalNanos;
    private final long validityNanos;

    // guarded by this
    private boolean active = true;
    private long validUntil;
    private long failures;

    ClaimHold(DefaultTaskQueue tasks, EngineTimers timers, RenewalScheduler<ClaimRef> renewals, TaskClaim claim,
              Duration interval, FluxSink<TaskClaim> sink) {
        super(timers, renewals);
        this.tasks = tasks;
        this.claim = claim;
        this.ref = new ClaimRef(claim.taskId(), claim.owner(), claim.token());
        this.sink = sink;
        this.intervalNanos = interval.toNanos();
        this.validityNanos = tasks.options().validityNanos(claim.claimTime());
        this.validUntil = claim.validUntilNanos();
    }

    /** Starts the deadline and the renewals: the first one interval from now. */
    void start() {
        sink.onDispose(() -> end(null));
        long now = now();
        if (!tasks.held(this) || now >= validUntil) {
            end("the queue is closed or the claim's deadline has passed");
            return;
        }
        synchronized (this) {
            if (active) { // a cancel meanwhile finds both in place and takes them out
                deadlineAt(validUntil);
                renewNext(now + intervalNanos);
            }
        }
    }

    private void renewNext(long due) {
        try {
            renewAt(due);
        } catch (RuntimeException rejected) {
            end("the scheduler of the task queue rejected a renewal timer: " + rejected);
        }
    }

    private long now() {
        return tasks.options().clock().nanoTime();
    }

    @Override
    protected ClaimRef renewRequest() {
        return ref;
    }

    @Override
    protected long renewalIntervalNanos() {
        return intervalNanos;
    }

    @Override
    protected Duration requestTimeout() {
        return tasks.options().requestTimeout();
    }

    @Override
    public synchronized boolean isActive() {
        return active;
    }

    @Override
    protected int onRenewalSent() {
        return 0;
    }

    @Override
    protected boolean onRenewOutcome(long sentAt, @Nullable RenewOutcome outcome) {
        if (outcome == null || !outcome.renewed()) {
            end("the store says the claim is not held any more");
            return false;
        }
        long until = sentAt + validityNanos;
        boolean extended;
        synchronized (this) {
            if (!active) {
                return false;
            }
            failures = 0;
            // a confirmation answered after its own validity ran out extends nothing: the deadline acts
            extended = until > validUntil && until > now();
            if (extended) {
                validUntil = until;
                deadlineAt(until);
            }
        }
        tasks.renewed(claim);
        if (extended) {
            sink.next(claim.withValidUntil(until));
        }
        return true;
    }

    @Override
    protected void onRenewFailed(LockException error, int sent) {
        if (!BackendErrors.isTransient(error)) {
            end("renewal failed: " + error);
            return;
        }
        long retryAt;
        boolean retry;
        synchronized (this) {
            retryAt = now() + tasks.backoffNanos(++failures);
            retry = active && retryAt < validUntil;
        }
        if (retry) {
            LOG.debug("renewal of the claim on task '{}' of queue '{}' failed, retrying: {}",
                    claim.taskId(), claim.queue(), error.toString());
            renewNext(retryAt);
        }
        // otherwise the deadline ends the hold
    }

    @Override
    protected void onDeadline() {
        boolean expired;
        synchronized (this) {
            if (!active) {
                return;
            }
            expired = now() >= validUntil;
            if (!expired) {
                deadlineAt(validUntil);
            }
        }
        if (expired) {
            end("its deadline passed without a confirmed renewal");
        }
    }

    @Override
    protected void onUnwatched() {
        // no timer can watch this claim: end the hold now (off the caller, which may hold this monitor)
        Schedulers.parallel().schedule(() -> end("the task queue's scheduler refused the deadline timer"));
    }

    /**
     * Ends the hold: renewals and deadline stopped, and the stream completed unless it was cancelled.
     *
     * @param reason why the claim counts as lost, or {@code null} when the subscriber cancelled
     */
    void end(@Nullable String reason) {
        synchronized (this) {
            if (!active) {
                return;
            }
            active = false;
            stopRenewals();
            removeDeadline();
        }
        tasks.unheld(this);
        if (reason != null) {
            LOG.debug("hold of the claim on task '{}' of queue '{}' (token {}) ends: {}",
                    claim.taskId(), claim.queue(), claim.token(), reason);
            sink.complete();
        }
    }
}
