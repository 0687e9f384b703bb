package io.reactivelocks.internal;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * The request timeouts of one client on one scheduler: one deadline structure instead of one
 * timer per store request. Requests with the same timeout are answered in the order they were
 * sent, give or take, so their deadlines come in order: each timeout has a FIFO queue and at most
 * one timer, armed for the oldest request still waiting. A request that is answered leaves its
 * entry behind; entries that are done are dropped from the head whenever a request is added or
 * the timer fires, so a queue holds about as many entries as there are requests in flight.
 *
 * <p>A request that times out is cancelled and fails with a {@link TimeoutException}, exactly
 * like {@code Mono.timeout}; a value that arrives first wins. If the scheduler refuses the timer
 * (it was disposed: the client is closing), the waiting requests fail with that refusal.
 */
final class RequestDeadlines {

    private final Scheduler scheduler;
    private final LockClock clock;
    /** Copy-on-write; usually one or two timeouts per client. */
    private volatile Bucket[] buckets = new Bucket[0];
    private volatile boolean closed;

    RequestDeadlines(Scheduler scheduler, LockClock clock) {
        this.scheduler = scheduler;
        this.clock = clock;
    }

    LockClock clock() {
        return clock;
    }

    /**
     * Cancels the timers; requests still in flight are no longer timed (the client closed its
     * store after waiting for them), so no timer outlives the client.
     */
    void close() {
        closed = true;
        for (Bucket b : buckets) {
            b.disarm();
        }
    }

    /** @return {@code source}, failing with a {@link TimeoutException} if it has not answered within {@code timeout} */
    <T> Mono<T> within(Mono<T> source, Duration timeout) {
        return new Deadlined<>(source, bucket(timeout));
    }

    /**
     * Subscribes {@code actual} to {@code source} bounded by {@code timeout}, like
     * {@code within(source, timeout).subscribe(actual)} without the operator object: for the
     * engine's own purpose-built subscribers on the hot path.
     */
    <T> void subscribe(Mono<T> source, Duration timeout, CoreSubscriber<? super T> actual) {
        Bucket b = bucket(timeout);
        source.subscribe(new Entry<>(actual, b, clock.nanoTime() + b.timeoutNanos));
    }

    private Bucket bucket(Duration timeout) {
        long nanos = timeout.toNanos();
        for (Bucket b : buckets) {
            if (b.timeoutNanos == nanos) {
                return b;
            }
        }
        synchronized (this) {
            for (Bucket b : buckets) {
                if (b.timeoutNanos == nanos) {
                    return b;
                }
            }
            Bucket[] next = java.util.Arrays.copyOf(buckets, buckets.length + 1);
            Bucket b = new Bucket(nanos, timeout);
            next[next.length - 1] = b;
            buckets = next;
            return b;
        }
    }

    /** The requests with one timeout, oldest first. */
    private final class Bucket {
        final long timeoutNanos;
        final Duration timeout;
        // guarded by this
        private final ArrayDeque<Entry<?>> queue = new ArrayDeque<>();
        // guarded by this: a timer is scheduled (or being scheduled) for the head
        private boolean armed;
        // guarded by this: the timer scheduled now, if any
        private Arm current;

        Bucket(long timeoutNanos, Duration timeout) {
            this.timeoutNanos = timeoutNanos;
            this.timeout = timeout;
        }

        void add(Entry<?> e) {
            boolean arm;
            synchronized (this) {
                Entry<?> head;
                while ((head = queue.peekFirst()) != null && head.isDone()) {
                    queue.pollFirst();
                }
                queue.addLast(e);
                arm = !armed;
                armed = true;
            }
            if (arm) {
                arm(e.due);
            }
        }

        void disarm() {
            reactor.core.Disposable t;
            synchronized (this) {
                t = current == null ? null : current.timer;
                current = null;
            }
            if (t != null) {
                t.dispose();
            }
        }

        private void arm(long due) {
            Arm a = new Arm();
            synchronized (this) {
                if (closed) {
                    armed = false;
                    return;
                }
                current = a;
            }
            try {
                reactor.core.Disposable t = scheduler.schedule(a, Math.max(0, due - clock.nanoTime()), TimeUnit.NANOSECONDS);
                boolean dispose;
                synchronized (this) {
                    a.timer = t;
                    dispose = closed;
                }
                if (dispose) {
                    t.dispose();
                }
            } catch (RejectedExecutionException refused) {
                List<Entry<?>> waiting;
                synchronized (this) {
                    waiting = new ArrayList<>(queue);
                    queue.clear();
                    armed = false;
                    current = null;
                }
                for (Entry<?> e : waiting) {
                    e.fail(refused);
                }
            }
        }

        /** One scheduled timer: close() cancels the one that is current. */
        private final class Arm implements Runnable {
            // guarded by Bucket.this
            reactor.core.Disposable timer;

            @Override
            public void run() {
                synchronized (Bucket.this) {
                    if (current == this) {
                        current = null;
                    }
                }
                fire();
            }
        }

        private void fire() {
            long now = clock.nanoTime();
            List<Entry<?>> expired = null;
            long next = Long.MIN_VALUE;
            synchronized (this) {
                Entry<?> e;
                while ((e = queue.peekFirst()) != null) {
                    if (!e.isDone() && e.due > now) {
                        next = e.due;
                        break;
                    }
                    queue.pollFirst();
                    if (!e.isDone()) {
                        if (expired == null) {
                            expired = new ArrayList<>(4);
                        }
                        expired.add(e);
                    }
                }
                if (next == Long.MIN_VALUE) {
                    armed = false;
                }
            }
            if (expired != null) {
                for (Entry<?> e : expired) {
                    e.fail(new TimeoutException("no answer within " + timeout));
                }
            }
            if (next != Long.MIN_VALUE) {
                arm(next);
            }
        }
    }

    /** The operator: one allocation per assembly, one entry per subscription. */
    private final class Deadlined<T> extends Mono<T> {
        private final Mono<T> source;
        private final Bucket bucket;

        Deadlined(Mono<T> source, Bucket bucket) {
            this.source = source;
            this.bucket = bucket;
        }

        @Override
        public void subscribe(CoreSubscriber<? super T> actual) {
            source.subscribe(new Entry<>(actual, bucket, clock.nanoTime() + bucket.timeoutNanos));
        }
    }

    /** One request: passes its answer on unless its deadline passed first. */
    private static final class Entry<T> implements CoreSubscriber<T>, Subscription {
        private static final int RUNNING = 0;
        /** The value came: no longer timed, the completion (or error) still passes. */
        private static final int ANSWERED = 1;
        private static final int DONE = 2;
        @SuppressWarnings("rawtypes")
        private static final AtomicIntegerFieldUpdater<Entry> STATE = AtomicIntegerFieldUpdater.newUpdater(Entry.class, "state");

        final long due;
        private final Bucket bucket;
        private final Context context;
        private volatile int state;
        private CoreSubscriber<? super T> actual;
        private Subscription upstream;

        Entry(CoreSubscriber<? super T> actual, Bucket bucket, long due) {
            this.actual = actual;
            this.bucket = bucket;
            this.due = due;
            this.context = actual.currentContext();
        }

        boolean isDone() {
            return state != RUNNING;
        }

        /** @return the subscriber, if this call ended the request (it is forgotten, for the GC) */
        private CoreSubscriber<? super T> end() {
            for (;;) {
                int s = state;
                if (s == DONE) {
                    return null;
                }
                if (STATE.compareAndSet(this, s, DONE)) {
                    CoreSubscriber<? super T> a = actual;
                    actual = null;
                    return a;
                }
            }
        }

        @Override
        public Context currentContext() {
            return context;
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (Operators.validate(upstream, s)) {
                upstream = s;
                actual.onSubscribe(this);
                if (state == RUNNING) { // not answered synchronously: watch its deadline
                    bucket.add(this);
                }
            }
        }

        @Override
        public void onNext(T value) {
            // the value stops the clock; completion follows from upstream (a store may finish work after it)
            if (STATE.compareAndSet(this, RUNNING, ANSWERED)) {
                actual.onNext(value);
            } else {
                Operators.onDiscard(value, context);
            }
        }

        @Override
        public void onError(Throwable error) {
            CoreSubscriber<? super T> a = end();
            if (a != null) {
                a.onError(error);
            } else {
                Operators.onErrorDropped(error, context);
            }
        }

        @Override
        public void onComplete() {
            CoreSubscriber<? super T> a = end();
            if (a != null) {
                a.onComplete();
            }
        }

        @Override
        public void request(long n) {
            upstream.request(n);
        }

        @Override
        public void cancel() {
            if (end() != null) {
                upstream.cancel();
            }
        }

        /** The deadline passed (or no timer could watch it): cancel the request and fail. */
        void fail(Throwable error) {
            CoreSubscriber<? super T> a = STATE.compareAndSet(this, RUNNING, DONE) ? actual : null;
            if (a != null) {
                actual = null;
                upstream.cancel();
                a.onError(error);
            }
        }
    }
}
