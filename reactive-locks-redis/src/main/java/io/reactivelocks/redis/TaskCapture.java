package io.reactivelocks.redis;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockException;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.LockEvent;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Operators;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One subscription of {@link RedisTaskQueue#capture} or {@link RedisTaskQueue#tryCapture}: a small
 * state machine that is its subscriber's {@link Subscription}.
 *
 * <ul>
 *   <li>Demand is counted here; a script call asks for {@code min(demand, limit left,
 *       MAX_CAPTURE_PER_CALL)} tasks, so the server never hands out more claims than were
 *       requested. One call (and the emission of its answer) is in flight at a time, which also
 *       serializes {@code onNext}.</li>
 *   <li>A call that found fewer tasks than it asked for means the queue is drained: a capture
 *       then waits for the first of a queue event (tasks ready, or the channel (re)subscribed),
 *       the earliest claim expiry reported by the server and the next backoff step; a
 *       {@code tryCapture} completes.</li>
 *   <li>The script call is never cancelled by the subscriber: claims that arrive after a cancel
 *       are released at once.</li>
 * </ul>
 */
final class TaskCapture implements Subscription {

    private static final Logger LOG = Loggers.getLogger(TaskCapture.class);

    private final RedisTaskQueue tasks;
    private final String queue;
    private final String owner = GrantRequest.newOwner();
    private final boolean wait;
    private final CoreSubscriber<? super TaskClaim> actual;

    // guarded by this
    private long remaining;      // claims still allowed by the limit
    private long demand;
    private boolean inFlight;    // a call, or the emission of its answer, is under way
    private boolean cancelled;
    private boolean done;
    private boolean waiting;     // drained: waiting for an event, the expiry hint or a backoff step
    private boolean wakePending; // an event arrived while a call was in flight
    private boolean eventsStarted;
    private long emptyRounds;
    private long errorRounds;
    private Disposable timer;
    private Disposable events;

    TaskCapture(RedisTaskQueue tasks, String queue, long limit, boolean wait, CoreSubscriber<? super TaskClaim> actual) {
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
        boolean subscribeEvents;
        synchronized (this) {
            if (done || cancelled || inFlight || demand == 0) {
                return;
            }
            limit = (int) Math.min(Math.min(demand, remaining), RedisTaskQueue.MAX_CAPTURE_PER_CALL);
            inFlight = true;
            waiting = false;
            wakePending = false;
            disposeTimer();
            subscribeEvents = wait && !eventsStarted;
            eventsStarted |= subscribeEvents;
        }
        if (subscribeEvents) {
            Disposable d = tasks.events(queue).subscribe(this::onEvent,
                    e -> LOG.debug("events of task queue '{}' failed, polling on: {}", queue, e.toString()),
                    this::onEventsComplete);
            synchronized (this) {
                if (!done && !cancelled) {
                    events = d;
                    d = null;
                }
            }
            if (d != null) {
                d.dispose();
            }
        }
        long sentAt = tasks.options().clock().nanoTime();
        tasks.captureCall(queue, owner, limit)
                .subscribe(reply -> onReply(reply, limit, sentAt), this::onError);
    }

    private void onReply(List<?> reply, int limit, long sentAt) {
        List<TaskClaim> claims;
        long hintMs;
        try {
            claims = tasks.claims(queue, owner, reply, sentAt);
            hintMs = ((Number) reply.get(1)).longValue();
        } catch (RuntimeException e) {
            onError(new LockBackendException(queue, "unexpected reply to the capture of task queue '" + queue + "': "
                    + reply, e, false));
            return;
        }
        int emitted = 0;
        for (TaskClaim claim : claims) {
            synchronized (this) {
                if (cancelled || done) {
                    break;
                }
                demand--;
                remaining--;
            }
            actual.onNext(claim);
            emitted++;
        }
        for (int i = emitted; i < claims.size(); i++) {
            // captured for a subscriber that has gone: give it back at once
            TaskClaim c = claims.get(i);
            tasks.release(c).subscribe(null, e -> LOG.debug("release of task '{}' after cancel failed: {}", c.taskId(), e.toString()));
        }
        boolean drained = claims.size() < limit;
        boolean complete = false;
        boolean again = false;
        long delay = 0;
        synchronized (this) {
            inFlight = false;
            errorRounds = 0;
            if (cancelled || done) {
                return;
            }
            if (remaining == 0 || (drained && !wait)) {
                done = true;
                complete = true;
                disposeAll();
            } else if (!drained || wakePending) {
                if (!drained) {
                    emptyRounds = 0;
                }
                again = true;
            } else {
                emptyRounds++;
                waiting = true;
                delay = tasks.backoffNanos(emptyRounds);
                if (hintMs >= 0) {
                    delay = Math.min(delay, TimeUnit.MILLISECONDS.toNanos(hintMs + 1));
                }
            }
        }
        if (complete) {
            actual.onComplete();
        } else if (again) {
            drive();
        } else {
            schedule(delay);
        }
    }

    private void onError(Throwable error) {
        LockException e = RedisErrors.mapQueue(queue, "task capture", error);
        boolean retry;
        long delay = 0;
        synchronized (this) {
            inFlight = false;
            if (cancelled || done) {
                return;
            }
            errorRounds++;
            retry = wait && RedisTaskQueue.isTransient(e) && errorRounds < tasks.options().backoff().maxAttempts;
            if (retry) {
                waiting = true;
                delay = tasks.backoffNanos(errorRounds);
            } else {
                done = true;
                disposeAll();
            }
        }
        if (retry) {
            LOG.debug("capture of task queue '{}' failed, retrying: {}", queue, e.toString());
            schedule(delay);
        } else {
            actual.onError(e);
        }
    }

    // ---- waiting

    private void schedule(long delayNanos) {
        Disposable t;
        try {
            t = tasks.scheduler().schedule(this::onWake, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RuntimeException rejected) {
            onError(new LockBackendException(queue, "the scheduler of task queue '" + queue + "' rejected a timer",
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

    private void onEvent(LockEvent event) {
        boolean wake;
        synchronized (this) {
            wake = waiting;
            if (inFlight) {
                wakePending = true; // the answer in flight may predate these tasks
            }
        }
        if (wake) {
            drive();
        }
    }

    private void onEventsComplete() {
        // the backend closed: nothing more can be captured
        synchronized (this) {
            if (done || cancelled) {
                return;
            }
            done = true;
            disposeAll();
        }
        actual.onComplete();
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
