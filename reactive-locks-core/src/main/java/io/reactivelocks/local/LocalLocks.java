package io.reactivelocks.local;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.store.AbstractLockStore;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.spi.window.WindowStore;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The in-memory store's entry: a {@link LockStore} session inside one JVM, with the same semantics
 * as the distributed stores (fencing tokens, expiry, release notifications) and every concept. All
 * concepts of one session share one state: two lock clients of a session exclude each other, two
 * sessions do not. For tests and local development.
 */
public final class LocalLocks {

    private LocalLocks() {
    }

    /** @return a session on Reactor's parallel scheduler and the JVM's monotonic clock */
    public static LockStore open() {
        return open(Schedulers.parallel(), LockClock.system());
    }

    /**
     * @param scheduler runs expiry timers (a {@code VirtualTimeScheduler} in tests)
     * @param clock     decides expiry (the "server clock")
     * @return a session over state of its own
     * @throws NullPointerException naming the argument when one is null
     */
    public static LockStore open(Scheduler scheduler, LockClock clock) {
        return new Session(Objects.requireNonNull(scheduler, "scheduler"), Objects.requireNonNull(clock, "clock"));
    }

    /**
     * A second session over the state of {@code session}, as a second instance of an application
     * connects to the same server: its locks exclude those of {@code session}, and closing either
     * leaves the other open.
     *
     * @param session a session of this store
     * @return a new session over the same state
     * @throws IllegalArgumentException naming the argument when it is not an in-memory session
     */
    public static LockStore alongside(LockStore session) {
        Objects.requireNonNull(session, "session");
        if (!(session instanceof Session s)) {
            throw new IllegalArgumentException("session: not an in-memory session: " + session);
        }
        return new Session(s.locks, s.semaphores, s.readWrite, s.windows, s.tasks, s.fenced);
    }

    private static final class Session extends AbstractLockStore {
        private final LocalLockStore locks;
        private final LocalSemaphoreStore semaphores;
        private final LocalReadWriteStore readWrite;
        private final LocalWindowStore windows;
        private final LocalTaskStore tasks;
        private final LocalFencedValues fenced;

        Session(Scheduler scheduler, LockClock clock) {
            this(new LocalLockStore(scheduler, clock), new LocalSemaphoreStore(scheduler, clock),
                    new LocalReadWriteStore(scheduler, clock), new LocalWindowStore(scheduler),
                    new LocalTaskStore(clock), new LocalFencedValues());
        }

        Session(LocalLockStore locks, LocalSemaphoreStore semaphores, LocalReadWriteStore readWrite,
                LocalWindowStore windows, LocalTaskStore tasks, LocalFencedValues fenced) {
            super("in-memory", EnumSet.allOf(Concept.class));
            this.locks = locks;
            this.semaphores = semaphores;
            this.readWrite = readWrite;
            this.windows = windows;
            this.tasks = tasks;
            this.fenced = fenced;
        }

        @Override
        protected LockBackend lockBackend(LockOptions options) {
            return new LocalLockBackend(locks);
        }

        @Override
        protected LockBackend fairLockBackend(LockOptions options) {
            return new LocalFairLockBackend(locks);
        }

        @Override
        protected SemaphoreStore semaphoreStore() {
            return semaphores; // its close() keeps nothing open: sharing it is safe
        }

        @Override
        protected ReadWriteStore readWriteStore() {
            return readWrite;
        }

        @Override
        protected WindowStore windowStore() {
            return windows;
        }

        @Override
        protected FencedValues fencedValuesPart() {
            return fenced;
        }

        @Override
        protected TaskStore taskStore() {
            return tasks;
        }

        @Override
        protected Flux<NameScan.Named> names(String prefix) {
            return Flux.defer(() -> {
                List<NameScan.Named> out = new ArrayList<>();
                locks.heldNames(prefix).forEach(n -> out.add(new NameScan.Named(Concept.LOCK, n)));
                semaphores.heldNames(prefix).forEach(n -> out.add(new NameScan.Named(Concept.SEMAPHORE, n)));
                readWrite.heldNames(prefix).forEach(n -> out.add(new NameScan.Named(Concept.READ_WRITE_LOCK, n)));
                tasks.claimedQueues(prefix).forEach(n -> out.add(new NameScan.Named(Concept.TASK_QUEUE, n)));
                return Flux.fromIterable(out);
            });
        }

        @Override
        protected Mono<Void> closeConnections() {
            return Mono.empty();
        }
    }
}
