package io.reactivelocks.spi;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A fair (FIFO) lock over a store's mutex: the held lock is the mutex's (its key or row), so renewal,
 * payload updates, inspection, the count of waiters and the events are the mutex's; waiting requests
 * wait in a {@link WaiterLine} that asks the store's grant again on their turn. A store brings its grant
 * ({@link #ask}: take the lock, refresh the caller's place in line or put it in line), its owner-checked
 * release of the lock or the place in line, its name and its close. Redis, PostgreSQL and MariaDB build
 * their fair locks on it.
 */
public abstract class FairLockBackend implements LockBackend {

    private final LockBackend mutex;
    private final WaiterLine line;

    /**
     * @param mutex  the dialect's mutex backend, whose lock table holds the held lock
     * @param turns  the change stream of a name a waiter watches for its turn
     * @param timers where the waits are timed
     */
    protected FairLockBackend(LockBackend mutex, Function<String, Flux<LockEvent>> turns, Scheduler timers) {
        this.mutex = Objects.requireNonNull(mutex, "backend");
        this.line = new WaiterLine(this::ask, turns, this::release, timers);
    }

    /**
     * One grant request: takes the lock, refreshes the caller's place in line or puts it in line.
     *
     * @param request the request
     * @return an {@link Attempt} or a {@link WaiterLine.StillQueued}; lazy
     */
    protected abstract Mono<Object> ask(GrantRequest request);

    /**
     * One grant attempt; a waiting request that is not granted answers {@link Attempt.Queued}.
     * Errors with a {@link io.reactivelocks.LockBackendException}.
     */
    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        Objects.requireNonNull(request, "request");
        return line.tryGrant(request);
    }

    /** As the mutex's: the live rows of the waiters table. */
    @Override
    public Mono<Integer> waiting(String name) {
        return mutex.waiting(name);
    }

    /** As the mutex's: the held lock is a row of the lock table. */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return mutex.renew(batch);
    }

    /** As the mutex's: the held lock is a row of the lock table. */
    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, @Nullable String payload) {
        return mutex.updatePayload(lock, payload);
    }

    /** As the mutex's: the holder, never a waiter. */
    @Override
    public Mono<Holder> inspect(String name) {
        return mutex.inspect(name);
    }

    /** As the mutex's: the name's changes. */
    @Override
    public Flux<LockEvent> events(String name) {
        return mutex.events(name);
    }
}
