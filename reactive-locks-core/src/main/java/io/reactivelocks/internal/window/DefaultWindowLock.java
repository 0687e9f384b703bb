package io.reactivelocks.internal.window;

import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockException;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.SafeListener;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.window.WindowGrant;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The window-lock engine: checks arguments at call time, sends one store request per
 * subscription within the request timeout, and turns the store's remaining time into a local
 * monotonic deadline (send time + remaining − drift allowance), so no wall clock is ever compared
 * on the client.
 */
public final class DefaultWindowLock implements WindowLock {

    private final WindowStore store;
    private final LockOptions options;
    private final Scheduler timer;
    private final SafeListener listener;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Mono<Void> close;

    /**
     * @param store   the store
     * @param options timeout, drift, clock and scheduler
     */
    public DefaultWindowLock(WindowStore store, LockOptions options) {
        this.store = Objects.requireNonNull(store, "store");
        this.options = Objects.requireNonNull(options, "options");
        this.timer = options.scheduler() != null ? options.scheduler() : Schedulers.parallel();
        this.listener = SafeListener.of(options.listener());
        this.close = Mono.defer(() -> {
            closed.set(true);
            return store.close();
        }).cache();
    }

    /**
     * Checks a period: a whole number of milliseconds from 1 ms to {@link WindowLock#MAX_PERIOD}.
     *
     * @param period the period
     * @return {@code period}
     * @throws NullPointerException     naming {@code period} when it is null
     * @throws IllegalArgumentException naming {@code period} when it is out of range or not whole milliseconds
     */
    public static Duration checkPeriod(Duration period) {
        Objects.requireNonNull(period, "period");
        if (period.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("period must be at least 1 ms, was " + period);
        }
        if (period.compareTo(MAX_PERIOD) > 0) {
            throw new IllegalArgumentException("period must be at most " + MAX_PERIOD + ", was " + period);
        }
        if (period.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException("period must be a whole number of milliseconds, was " + period);
        }
        return period;
    }

    @Override
    public Mono<WindowClaim> tryClaim(String name, Duration period) {
        LockNames.check(name);
        checkPeriod(period);
        return Mono.deferContextual(context -> {
            if (closed.get()) {
                return Mono.error(new LockClientClosedException(name));
            }
            long sentAt = options.clock().nanoTime();
            Mono<WindowClaim> claim = store.claim(name, period)
                    .timeout(Mono.delay(options.requestTimeout(), timer),
                            Mono.error(() -> new TimeoutException("no answer within " + options.requestTimeout())))
                    .onErrorMap(e -> BackendErrors.map("the window store", name, "window claim", e))
                    .map(g -> claim(name, period, g, sentAt));
            return listener.active() ? reported(claim, name, sentAt, listener.forAcquire(name, context)) : claim;
        });
    }

    /** A claim is an acquire that never waits: granted, contended or failed; it ends with its window (no release). */
    private Mono<WindowClaim> reported(Mono<WindowClaim> claim, String name, long sentAt, SafeListener l) {
        return claim
                .doOnSuccess(c -> {
                    if (c == null) {
                        l.onContended(name);
                    } else {
                        l.onAcquired(name, c.token(), Duration.ofNanos(options.clock().nanoTime() - sentAt));
                    }
                })
                .doOnError(e -> l.onAcquireFailed(name, e, Duration.ofNanos(options.clock().nanoTime() - sentAt)))
                .doOnCancel(() -> l.onAcquireCancelled(name, Duration.ofNanos(options.clock().nanoTime() - sentAt)));
    }

    private WindowClaim claim(String name, Duration period, WindowGrant g, long sentAt) {
        long valid = Math.max(0, options.validityNanos(g.remaining()));
        return new WindowClaim(name, period, g.window(), g.token(), sentAt + valid);
    }

    @Override
    public LockOptions options() {
        return options;
    }

    @Override
    public Mono<Void> close() {
        return close;
    }

    @Override
    public String toString() {
        return "WindowLock{" + store + "}";
    }
}
