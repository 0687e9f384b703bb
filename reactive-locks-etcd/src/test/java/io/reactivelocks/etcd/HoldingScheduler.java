package io.reactivelocks.etcd;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A test double of the scheduler given to a backend or store session: it runs work on a scheduler
 * of its own, except tasks delayed by exactly {@code held}, which it records and never runs — so a
 * test sees how many timers of that delay the code armed (e.g. one per channel follower, each
 * waiting a reconnect interval) without asking the code.
 */
final class HoldingScheduler implements Scheduler {

    private final Duration held;
    private final Scheduler delegate = Schedulers.newSingle("holding-scheduler");
    private final List<Runnable> heldTasks = new CopyOnWriteArrayList<>();

    /** @param held the delay of the tasks to hold back */
    HoldingScheduler(Duration held) {
        this.held = held;
    }

    /** @return how many tasks delayed by the held delay were scheduled so far */
    int held() {
        return heldTasks.size();
    }

    @Override
    public Disposable schedule(Runnable task) {
        return delegate.schedule(task);
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        if (unit.toNanos(delay) == held.toNanos()) {
            heldTasks.add(task);
            return Disposables.single();
        }
        return delegate.schedule(task, delay, unit);
    }

    @Override
    public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        return delegate.schedulePeriodically(task, initialDelay, period, unit);
    }

    @Override
    public Worker createWorker() {
        return delegate.createWorker();
    }

    @Override
    public void dispose() {
        delegate.dispose();
    }
}
