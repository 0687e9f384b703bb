package io.reactivelocks.internal.task;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.task.Capture;
import io.reactivelocks.spi.task.TaskWakeUp;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Operators;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One subscription of {@link TaskQueue#capture} or {@link TaskQueue#tryCapture}: a small state
 * machine that is its subscriber's {@link Subscription}.
 *
 * <ul>
 *   <li>Demand is counted here. A store call asks for {@code min(demand, limit left,
 *       MAX_CAPTURE_PER_CALL)} tasks, and its claims are emitted once the call answered; one call,
 *       and the emission of its claims, is in flight at a time — which also serializes
 *       {@code onNext}. Demand added meanwhile (also from within {@code onNext}) is served by the
 *       next call.</li>
 *   <li>Each call captures under a fresh owner id: claims of a call that answered after a cancel
 *       are released by their ids and tokens, and when a call's answer is lost (error, timeout)
 *       whatever it may have captured is released by its owner id (best effort: claims left over
 *       simply expire).</li>
 *   <li>A call that found fewer tasks than it asked for means the queue is drained: a capture then
 *       waits for the first of a wake-up from the store, the earliest claim expiry the store
 *       reported and the next backoff step; a {@code tryCapture} completes. A wake-up that arrives
 *       while a call is in flight makes the next call go at once (the answer in flight may predate
 *       the new tasks).</li>
 *   <li>A call is never cancelled by the subscriber; it is bounded by the request timeout.</li>
 * </ul>
 * Locking is only around the few fields below, never around I/O or a signal to the subscriber.
 */
final class TaskCapture implements Subscription {

    private static final Logger LOG = Loggers.getLogger(TaskCapture.class);

    private final DefaultTaskQueue tasks;
    private final String queue;
    private final boolean wait;
    private final CoreSubscriber<? super TaskClaim> actual;

    // guarded by this
    private long remaining;      // claims still allowed by the limit
    private long demand;
    private boolean inFlight;    // a call, or the emission of its claims, is under way
    private boolean cancelled;
    private boolean done;
    private boolean waiting;     // drained or failed: waiting for a wake-up, the expiry hint or a backoff step
    private boolean wakePending; // a wake-up arrived while a call was in flight
    private boolean wakeUpsStarted;
    private long emptyRounds;
    private long failures;
    private boolean pendingComplete;                // the store closed while a call was in flight
    private @Nullable LockException pendingError;   // a failure to signal once the call in flight settled
    private @Nullable Disposable timer;
    private @Nullable Disposable wakeUps;

    TaskCapture(DefaultTaskQueue tasks, String queue, long limit, boolean wait, CoreSubscriber<? super TaskClaim> actual) {
        this.tasks = tasks;
        this.queue = queue;
        this.remaining = limit;
        this.wait = wait;
        this.actual = actual;
    }

    @Override
    public void request(long n) {
        if (!Operators.validate(n)) {
            return;
        }
        synchronized (this) {
            demand = Operators.addCap(demand, n);
        }
        drive();
    }

    @Override
    public void cancel() {
        synchronized (this) {
            if (cancelled) {
                return;
            }
            cancelled = true;
            disposeAll();
        }
    }

    // ---- calls

    private void drive() {
        int limit;
        boolean startWakeUps;
        boolean closed = false;
        synchronized (this) {
            if (done || cancelled || inFlight || demand == 0 || pendingComplete || pendingError != null) {
                return;
            }
            if (tasks.isClosed()) {
                done = true;
                disposeAll();
                closed = true;
                limit = 0;
                startWakeUps = false;
            } else {
                limit = (int) Math.min(Math.min(demand, remaining), TaskQueue.MAX_CAPTURE_PER_CALL);
                inFlight = true;
                waiting = false;
                wakePending = false;
                disposeTimer();
                startWakeUps = wait && !wakeUpsStarted;
                wakeUpsStarted |= startWakeUps;
            }
        }
        if (closed) {
            actual.onComplete();
            return;
        }
        if (startWakeUps) {
            startWakeUps();
        }
        String owner = GrantRequest.newOwner(); // before the call: whatever it captures can be released by it
        long sentAt = tasks.options().clock().nanoTime();
        tasks.captureCall(queue, owner, limit)
                .subscribe(capture -> onCapture(capture, owner, limit, sentAt), e -> onError(e, owner));
    }

    private void onCapture(Capture capture, String owner, int limit, long sentAt) {
        List<TaskClaim> claims = tasks.claims(queue, owner, capture, sentAt);
        int delivered = 0;
        for (TaskClaim claim : claims) {
            synchronized (this) {
                if (cancelled || done) {
                    break;
                }
                demand--;
                remaining--;
            }
            tasks.delivered(claim);
            actual.onNext(claim);
            delivered++;
        }
        if (delivered < claims.size()) {
            tasks.releaseUndelivered(queue, claims.subList(delivered, claims.size()));
        }
        boolean again = false;
        boolean terminating = false;
        LockException signal = null;
        long delay = 0;
        synchronized (this) {
            inFlight = false;
            failures = 0;
            if (cancelled || done) {
                return;
            }
            boolean drained = claims.size() < limit;
            if (pendingComplete || pendingError != null || remaining == 0 || (drained && !wait)) {
                done = true;
                disposeAll();
                terminating = true;
                signal = pendingError;
            } else if (!drained || wakePending) {
                if (!drained) {
                    emptyRounds = 0;
                }
                again = true;
            } else {
                emptyRounds++;
                waiting = true;
                delay = tasks.backoffNanos(emptyRounds);
                if (capture.nextExpiry() != null) {
                    delay = Math.min(delay, capture.nextExpiry().toNanos() + TimeUnit.MILLISECONDS.toNanos(1));
                }
            }
        }
        if (terminating) {
            terminate(signal);
        } else if (again) {
            drive();
        } else {
            schedule(Math.max(0, delay));
        }
    }

    private void onError(Throwable error, String owner) {
        // the call may have taken effect before its answer was lost: give back what it took
        tasks.releaseOwner(queue, owner);
        LockException e = error instanceof LockException le ? le
                : new LockBackendException(queue, "task capture of queue '" + queue + "' failed: " + error, error, false);
        boolean retry;
        LockException signal = e;
        long delay = 0;
        synchronized (this) {
            inFlight = false;
            if (cancelled || done) {
                return;
            }
            failures++;
            boolean terminating = pendingComplete || pendingError != null;
            retry = !terminating && wait && BackendErrors.isTransient(e) && failures <= tasks.maxCaptureRetries();
            if (retry) {
                waiting = true;
                delay = tasks.backoffNanos(failures);
            } else {
                if (terminating) {
                    signal = pendingError; // null: the store closed, complete
                }
                done = true;
                disposeAll();
            }
        }
        if (retry) {
            LOG.debug("capture of task queue '{}' failed, retrying: {}", queue, e.toString());
            schedule(delay);
        } else {
            terminate(signal);
        }
    }

    private void terminate(@Nullable LockException error) {
        if (error == null) {
            actual.onComplete();
        } else {
            actual.onError(error);
        }
    }

    // ---- waiting

    private void schedule(long delayNanos) {
        Disposable t;
        try {
            t = tasks.scheduler().schedule(this::onWake, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RuntimeException rejected) {
            fail(new LockBackendException(queue, "the scheduler of task queue '" + queue + "' rejected a timer",
                    rejected, false));
            return;
        }
        synchronized (this) {
            if (waiting && !done && !cancelled) {
                disposeTimer();
                timer = t;
                return;
            }
        }
        t.dispose();
    }

    private void onWake() {
        synchronized (this) {
            if (!waiting) {
                return;
            }
        }
        drive();
    }

    private void startWakeUps() {
        Disposable d = tasks.wakeUps(queue).subscribe(this::onWakeUp,
                e -> LOG.debug("wake-ups of task queue '{}' failed, polling on: {}", queue, e.toString()),
                this::onWakeUpsComplete);
        synchronized (this) {
            if (!done && !cancelled) {
                wakeUps = d;
                return;
            }
        }
        d.dispose();
    }

    private void onWakeUp(TaskWakeUp wakeUp) {
        boolean wake;
        synchronized (this) {
            if (inFlight) {
                wakePending = true;
            }
            wake = waiting;
        }
        if (wake) {
            drive();
        }
    }

    /** The store closed: nothing more can be captured. */
    private void onWakeUpsComplete() {
        synchronized (this) {
            if (done || cancelled) {
                return;
            }
            if (inFlight) {
                pendingComplete = true; // signalled once the call in flight settled, never during onNext
                return;
            }
            done = true;
            disposeAll();
        }
        actual.onComplete();
    }

    private void fail(LockException e) {
        synchronized (this) {
            if (done || cancelled) {
                return;
            }
            if (inFlight) {
                pendingError = e;
                return;
            }
            done = true;
            disposeAll();
        }
        actual.onError(e);
    }

    // guarded by this
    private void disposeAll() {
        disposeTimer();
        if (wakeUps != null) {
            wakeUps.dispose();
            wakeUps = null;
        }
    }

    // guarded by this
    private void disposeTimer() {
        if (timer != null) {
            timer.dispose();
            timer = null;
        }
    }
}
