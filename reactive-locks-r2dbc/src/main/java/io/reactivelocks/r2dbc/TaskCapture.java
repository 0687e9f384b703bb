package io.reactivelocks.r2dbc;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.GrantRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Operators;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One subscription of {@link PostgresTaskQueue#capture}: a small state machine that is its
 * subscriber's {@link Subscription}.
 *
 * <ul>
 *   <li>Demand is counted here. A statement asks for {@code min(demand, MAX_CAPTURE_PER_STATEMENT)}
 *       tasks, and its claims are emitted only once the whole result arrived (the statement has
 *       committed); one statement, and the emission of its claims, is in flight at a time — which
 *       also serializes {@code onNext}. Demand added meanwhile (also from within {@code onNext})
 *       is served by the next statement.</li>
 *   <li>Each statement captures under a fresh owner id, so its claims can be told apart from the
 *       ones delivered before: claims of a statement that answered after a cancel are released
 *       by their ids and tokens, and when a statement's answer is lost (error, timeout) whatever it
 *       may have captured is released by its owner id (best effort: a commit after that release
 *       leaves claims that simply expire).</li>
 *   <li>A statement that found fewer tasks than it asked for means the queue is drained: the
 *       capture then waits for the first of a queue wake-up (a notification, or the listening
 *       connection (re)subscribed), the earliest claim expiry the statement reported and the next
 *       backoff step. A wake-up that arrives while a statement is in flight makes the next
 *       statement go at once (the answer in flight may predate the new tasks).</li>
 *   <li>The statement is never cancelled by the subscriber; it is bounded by the request timeout.</li>
 * </ul>
 * Locking is only around the few fields below, never around I/O or a signal to the subscriber.
 */
final class TaskCapture implements Subscription {

    private static final Logger LOG = Loggers.getLogger(TaskCapture.class);

    private final PostgresTaskQueue tasks;
    private final String queue;
    private final Duration claimTime;
    private final CoreSubscriber<? super TaskClaim> actual;

    // guarded by this
    private long demand;
    private boolean inFlight;    // a statement, or the emission of its claims, is under way
    private boolean cancelled;
    private boolean done;
    private boolean waiting;     // drained or failed: waiting for a wake-up, the expiry hint or a backoff step
    private boolean wakePending; // a wake-up arrived while a statement was in flight
    private boolean eventsStarted;
    private long emptyRounds;
    private long failures;
    private boolean pendingComplete;     // the backend closed while a statement was in flight
    private LockException pendingError;  // a failure to signal once the statement in flight settled
    private Disposable timer;
    private Disposable events;

    TaskCapture(PostgresTaskQueue tasks, String queue, Duration claimTime, CoreSubscriber<? super TaskClaim> actual) {
        this.tasks = tasks;
        this.queue = queue;
        this.claimTime = claimTime;
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

    // ---- statements

    private void drive() {
        int limit;
        boolean startEvents;
        synchronized (this) {
            if (done || cancelled || inFlight || demand == 0 || pendingComplete || pendingError != null) {
                return;
            }
            limit = (int) Math.min(demand, PostgresTaskQueue.MAX_CAPTURE_PER_STATEMENT);
            inFlight = true;
            waiting = false;
            wakePending = false;
            disposeTimer();
            startEvents = !eventsStarted;
            eventsStarted = true;
        }
        if (startEvents) {
            startEvents();
        }
        String owner = GrantRequest.newOwner(); // before the statement: whatever it captures can be released by it
        long sentAt = tasks.clock().nanoTime();
        tasks.captureStatement(queue, owner, limit, claimTime)
                .subscribe(rows -> onRows(rows, owner, limit, sentAt), e -> onError(e, owner));
    }

    private void onRows(List<PostgresTaskQueue.CaptureRow> rows, String owner, int limit, long sentAt) {
        List<TaskClaim> claims = tasks.claims(queue, owner, rows, claimTime, sentAt);
        Long hintUs = null;
        for (PostgresTaskQueue.CaptureRow r : rows) {
            if (r.kind() == 'h') {
                hintUs = r.nextExpiryUs();
            }
        }
        int delivered = 0;
        for (TaskClaim claim : claims) {
            synchronized (this) {
                if (cancelled || done) {
                    break;
                }
                demand--;
            }
            actual.onNext(claim);
            delivered++;
        }
        if (delivered < claims.size()) {
            List<TaskClaim> left = claims.subList(delivered, claims.size());
            tasks.releaseUndelivered(queue, owner, left).subscribe(
                    n -> LOG.debug("released {} claims of queue '{}' captured for a subscriber that had gone", n, queue),
                    e -> LOG.debug("release of undelivered claims of queue '{}' failed (they expire by themselves): {}",
                            queue, e.toString()));
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
            if (pendingComplete || pendingError != null) {
                done = true;
                disposeAll();
                terminating = true;
                signal = pendingError;
            }
        }
        if (terminating) {
            terminate(signal);
            return;
        }
        synchronized (this) {
            if (cancelled || done) {
                return;
            }
            boolean drained = claims.size() < limit;
            if (!claims.isEmpty()) {
                emptyRounds = 0;
            }
            if (!drained || wakePending) {
                again = true;
            } else {
                emptyRounds++;
                waiting = true;
                delay = tasks.backoffNanos(emptyRounds);
                if (hintUs != null) {
                    delay = Math.min(delay, TimeUnit.MICROSECONDS.toNanos(Math.max(0, hintUs)) + TimeUnit.MILLISECONDS.toNanos(1));
                }
            }
        }
        if (again) {
            drive();
        } else {
            schedule(delay);
        }
    }

    private void onError(Throwable error, String owner) {
        // the statement may have committed before its answer was lost: give back what it took
        tasks.releaseUndelivered(queue, owner, null).subscribe(null,
                e -> LOG.debug("release after a failed capture of queue '{}' failed (claims expire by themselves): {}",
                        queue, e.toString()));
        LockException e = PostgresErrors.mapQueue(queue, "task capture", error);
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
            retry = !terminating && e instanceof LockBackendException be && be.isTransient()
                    && failures <= tasks.maxCaptureRetries();
            if (retry) {
                waiting = true;
                delay = tasks.backoffNanos(failures);
            } else {
                if (terminating) {
                    signal = pendingError; // null: the backend closed, complete
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

    private void terminate(LockException error) {
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

    private void startEvents() {
        Disposable d = tasks.events(queue).subscribe(this::onEvent,
                e -> LOG.debug("wake-ups of task queue '{}' failed, polling on: {}", queue, e.toString()),
                this::onEventsComplete);
        synchronized (this) {
            if (!done && !cancelled) {
                events = d;
                return;
            }
        }
        d.dispose();
    }

    private void onEvent(LockEvent event) {
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

    /** The backend closed: nothing more can be captured. */
    private void onEventsComplete() {
        synchronized (this) {
            if (done || cancelled) {
                return;
            }
            if (inFlight) {
                pendingComplete = true; // signalled once the statement in flight settled, never during onNext
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
        if (events != null) {
            events.dispose();
            events = null;
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
