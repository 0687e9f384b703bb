package io.reactivelocks.test;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * A {@link Scheduler} that runs its tasks on another one and keeps track of its timers (tasks
 * scheduled with a delay or periodically): which are still pending, and which ran after
 * {@link #markClosed()}. A client and its store given this scheduler can be checked for timers
 * that outlive their {@code close()}. Immediate tasks are passed through untracked.
 */
public final class TimerTrackingScheduler implements Scheduler {

    private final Scheduler delegate;
    private final Set<Timer> pending = ConcurrentHashMap.newKeySet();
    private final List<String> ranAfterClose = java.util.Collections.synchronizedList(new ArrayList<>());
    private final AtomicBoolean closed = new AtomicBoolean();

    private TimerTrackingScheduler(Scheduler delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /**
     * @param delegate the scheduler that runs the tasks (not disposed by this one)
     * @return a tracking scheduler over {@code delegate}
     */
    public static TimerTrackingScheduler wrap(Scheduler delegate) {
        return new TimerTrackingScheduler(delegate);
    }

    /** From now on, a timer that fires is recorded as having outlived the close. */
    public void markClosed() {
        closed.set(true);
    }

    /** @return a description (delay and task) of each timer neither fired nor disposed yet */
    public List<String> pendingTimers() {
        List<String> out = new ArrayList<>();
        for (Timer t : pending) {
            out.add(t.toString());
        }
        return out;
    }

    /** @return a description of each timer that fired after {@link #markClosed()} */
    public List<String> timersRunAfterClose() {
        synchronized (ranAfterClose) {
            return List.copyOf(ranAfterClose);
        }
    }

    @Override
    public Disposable schedule(Runnable task) {
        return delegate.schedule(task);
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        Timer t = new Timer(task, unit.toMillis(delay) + " ms", false, null);
        return t.start(() -> delegate.schedule(t, delay, unit));
    }

    @Override
    public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        Timer t = new Timer(task, "every " + unit.toMillis(period) + " ms", true, null);
        return t.start(() -> delegate.schedulePeriodically(t, initialDelay, period, unit));
    }

    @Override
    public Worker createWorker() {
        Worker w = delegate.createWorker();
        return new Worker() {
            private final Worker self = this;

            @Override
            public Disposable schedule(Runnable task) {
                return w.schedule(task);
            }

            @Override
            public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                Timer t = new Timer(task, unit.toMillis(delay) + " ms (worker)", false, self);
                return t.start(() -> w.schedule(t, delay, unit));
            }

            @Override
            public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
                Timer t = new Timer(task, "every " + unit.toMillis(period) + " ms (worker)", true, self);
                return t.start(() -> w.schedulePeriodically(t, initialDelay, period, unit));
            }

            @Override
            public void dispose() {
                w.dispose();
                // a disposed worker runs none of its timers
                pending.removeIf(t -> t.worker == this);
            }

            @Override
            public boolean isDisposed() {
                return w.isDisposed();
            }
        };
    }

    @Override
    public long now(TimeUnit unit) {
        return delegate.now(unit);
    }

    @Override
    public void dispose() {
        // the delegate belongs to the caller
    }

    @Override
    public boolean isDisposed() {
        return delegate.isDisposed();
    }

    @Override
    public void init() {
        delegate.init();
    }

    private final class Timer implements Runnable, Disposable {

        private final Runnable task;
        private final String what;
        private final boolean periodic;
        private final Object worker;
        private volatile Disposable scheduled;
        private volatile boolean disposed;

        Timer(Runnable task, String what, boolean periodic, Object worker) {
            this.task = task;
            this.what = what;
            this.periodic = periodic;
            this.worker = worker;
            pending.add(this);
        }

        Disposable start(java.util.function.Supplier<Disposable> schedule) {
            Disposable d;
            try {
                d = schedule.get();
            } catch (RuntimeException e) { // refused: never runs
                pending.remove(this);
                throw e;
            }
            scheduled = d;
            if (disposed) {
                d.dispose();
            }
            return this;
        }

        @Override
        public void run() {
            if (closed.get()) {
                ranAfterClose.add(toString());
            }
            if (!periodic) {
                pending.remove(this);
            }
            task.run();
        }

        @Override
        public void dispose() {
            disposed = true;
            pending.remove(this);
            Disposable d = scheduled;
            if (d != null) {
                d.dispose();
            }
        }

        @Override
        public boolean isDisposed() {
            return disposed || (!periodic && !pending.contains(this));
        }

        @Override
        public String toString() {
            return "timer " + what + ": " + task;
        }
    }
}
