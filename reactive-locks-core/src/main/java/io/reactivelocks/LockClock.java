package io.reactivelocks;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import reactor.core.scheduler.Scheduler;

/**
 * The monotonic clock the client measures lease deadlines with, in nanoseconds. Never a wall
 * clock: only differences between two readings of the same clock mean anything.
 */
@FunctionalInterface
public interface LockClock {

    /** @return the current reading in nanoseconds (arbitrary origin, never goes backwards) */
    long nanoTime();

    /** @return the JVM's monotonic clock ({@link System#nanoTime()}), the default */
    static LockClock system() {
        return System::nanoTime;
    }

    /**
     * Reads time from a scheduler: meant for Reactor's {@code VirtualTimeScheduler} in tests.
     * Do not use it with Reactor's real schedulers, whose {@code now()} is the wall clock.
     *
     * @param scheduler the scheduler whose {@code now()} drives the clock
     * @return a clock reading {@code scheduler.now(NANOSECONDS)}
     */
    static LockClock of(Scheduler scheduler) {
        Objects.requireNonNull(scheduler, "scheduler");
        return () -> scheduler.now(TimeUnit.NANOSECONDS);
    }
}
