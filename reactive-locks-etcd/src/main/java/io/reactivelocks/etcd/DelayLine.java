package io.reactivelocks.etcd;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;

/**
 * Many delays of one length on one timer: each {@link #after()} joins a line, and one task on the
 * scheduler, armed for the earliest entry (plus {@link #SLACK}, so that one firing ends the entries
 * of a stretch of time together), ends every entry whose time has come and is armed again for the
 * next. A grant on etcd waits {@link EtcdLockBackend#HELD_KEY_WATCH_DELAY} before its key is
 * watched; a timer of its own per grant ({@code Mono.delay}) cost a scheduler queue insertion and
 * usually a wake of the timer thread in the grant's path — about 45 µs of a 900 µs handoff on a
 * loaded 2-core machine — where joining the line costs a queue insertion, and a timer only when the
 * line was empty.
 *
 * <p>The length is read when an entry joins, so it may change (tests): an entry due before the
 * armed time arms the timer earlier.
 */
final class DelayLine {

    /** How much later than its time an entry may end, so that one firing serves many entries. */
    static final long SLACK = TimeUnit.MILLISECONDS.toNanos(10);

    private final Scheduler scheduler;
    private final Supplier<Duration> length;
    private final ConcurrentLinkedQueue<Entry> line = new ConcurrentLinkedQueue<>();
    // guarded by this: the armed timer and the time it fires at
    private @Nullable Disposable timer;
    private long armedFor;
    private boolean closed;

    /**
     * @param scheduler where the line's timer runs
     * @param length    the delay, read when an entry joins
     */
    DelayLine(Scheduler scheduler, Supplier<Duration> length) {
        this.scheduler = scheduler;
        this.length = length;
    }

    /** @return completes (on the scheduler) once the line's delay has passed since subscription; cancel to leave */
    Mono<Void> after() {
        return Mono.create(sink -> {
            Entry e = new Entry(now() + length.get().toNanos(), sink);
            sink.onDispose(() -> e.left = true);
            line.add(e);
            arm(e.due);
        });
    }

    private long now() {
        return scheduler.now(TimeUnit.NANOSECONDS);
    }

    /** Arms the timer for an entry due at {@code due}, unless it fires by then anyway. */
    private void arm(long due) {
        long at = due + SLACK;
        Disposable previous;
        synchronized (this) {
            if (closed || (timer != null && armedFor - at <= 0)) {
                return;
            }
            previous = timer;
            armedFor = at;
            timer = scheduler.schedule(this::fire, Math.max(0, at - now()), TimeUnit.NANOSECONDS);
        }
        if (previous != null) {
            previous.dispose();
        }
    }

    /** Stops the timer; entries waiting (and any joining later) never end — the backend is closing. */
    void close() {
        Disposable t;
        synchronized (this) {
            closed = true;
            t = timer;
            timer = null;
        }
        if (t != null) {
            t.dispose();
        }
        line.clear();
    }

    private void fire() {
        synchronized (this) {
            if (closed) {
                return;
            }
            timer = null;
        }
        long now = now();
        boolean rest = false;
        long next = 0;
        for (Iterator<Entry> it = line.iterator(); it.hasNext(); ) {
            Entry e = it.next();
            if (e.left) {
                it.remove();
            } else if (e.due - now <= 0) {
                it.remove();
                e.sink.success();
            } else if (!rest || e.due - next < 0) {
                rest = true;
                next = e.due;
            }
        }
        if (rest) {
            arm(next);
        }
        // an entry that joined while this ran armed the timer itself (timer was null by then) or is in the scan
    }

    private static final class Entry {
        final long due;
        final MonoSink<Void> sink;
        volatile boolean left;

        Entry(long due, MonoSink<Void> sink) {
            this.due = due;
            this.sink = sink;
        }
    }
}
