package io.reactivelocks.local;

import io.reactivelocks.spi.window.WindowGrant;
import io.reactivelocks.spi.window.WindowStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Window claims in memory (one JVM; tests and local development). The store's time is
 * {@code scheduler.now(MILLISECONDS)}: the wall clock for Reactor's own schedulers (so windows
 * start on the same epoch boundaries as on the servers), virtual time for a
 * {@code VirtualTimeScheduler}. Tokens come from one counter, strictly increasing.
 *
 * <pre>{@code
 * WindowLock hourly = WindowLock.create(new LocalWindowStore());
 * }</pre>
 */
public final class LocalWindowStore implements WindowStore {

    private final Scheduler time;
    private final Map<String, Long> windows = new HashMap<>(); // "<periodMs>:<name>" -> last claimed window; guarded by this
    private long lastToken;                                    // guarded by this

    /** A store on the wall clock ({@link Schedulers#parallel()}'s {@code now}). */
    public LocalWindowStore() {
        this(Schedulers.parallel());
    }

    /** @param time whose {@code now(MILLISECONDS)} is the store's clock (a {@code VirtualTimeScheduler} in tests) */
    public LocalWindowStore(Scheduler time) {
        this.time = Objects.requireNonNull(time, "time");
    }

    @Override
    public Mono<WindowGrant> claim(String name, Duration period) {
        return Mono.fromSupplier(() -> {
            long p = period.toMillis();
            long now = time.now(TimeUnit.MILLISECONDS);
            long window = Math.floorDiv(now, p);
            synchronized (this) {
                Long last = windows.get(p + ":" + name);
                if (last != null && last >= window) {
                    return null;
                }
                windows.put(p + ":" + name, window);
                long token = ++lastToken;
                return new WindowGrant(window, token, Duration.ofMillis((window + 1) * p - now));
            }
        });
    }

    /** @return an empty {@code Mono}: there is nothing to close */
    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }

    @Override
    public String toString() {
        return "LocalWindowStore";
    }
}
