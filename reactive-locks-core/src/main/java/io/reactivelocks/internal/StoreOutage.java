package io.reactivelocks.internal;

import io.reactivelocks.spi.BackendErrors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The reachability of one client's store, as its requests see it, for the log: one WARN line when
 * requests start failing with transient errors (the store is down, paused or unreachable), one INFO
 * line when it answers again — not a line per request. Decides nothing: the engine's retries and
 * timeouts do that. Not API.
 *
 * <p>A request sent during an outage that fails after the store answers again (its timeout ends a
 * moment after the first answers of the recovery, on a loaded machine easily) belongs to the outage
 * that was logged, not to a new one: requests remember the {@link #epoch()} they were sent in, and
 * a failure of an earlier epoch starts nothing. Without it, one outage could log two WARN and two
 * INFO lines.
 */
final class StoreOutage {

    private final Logger log;
    private final String store;
    private final String client;
    /** System.nanoTime() of the first failure of the current outage; 0 while the store answers. */
    private final AtomicLong downSince = new AtomicLong();
    /** How many outages ended: a request's epoch. */
    private final AtomicInteger ended = new AtomicInteger();

    StoreOutage(String store, String client) {
        this(store, client, Loggers.getLogger("io.reactivelocks.outage"));
    }

    StoreOutage(String store, String client, Logger log) {
        this.store = store;
        this.client = client;
        this.log = log;
    }

    /** @return the epoch a request sent now belongs to, for {@link #failed(Throwable, int)} */
    int epoch() {
        return ended.get();
    }

    /** A request was answered (granted, busy, renewed, released): an outage, if any, is over. */
    void answered() {
        if (downSince.get() == 0) {
            return; // the common case: one volatile read
        }
        ended.incrementAndGet(); // before the outage ends: a failure of its requests meanwhile starts nothing
        long since = downSince.getAndSet(0);
        if (since != 0) {
            log.info("{} answers again ({}), after {} ms unreachable", store, client,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since));
        }
    }

    /**
     * A request sent now (in the current epoch) failed: a transient failure starts an outage (logged once);
     * others are the caller's to report.
     */
    void failed(Throwable error) {
        failed(error, ended.get());
    }

    /**
     * A request sent in {@code epoch} failed: a transient failure starts an outage (logged once), unless
     * the request was sent before the last outage ended (it belongs to that outage); others are the
     * caller's to report.
     *
     * @param epoch what {@link #epoch()} said when the request was sent
     */
    void failed(Throwable error, int epoch) {
        if (!BackendErrors.isTransient(error) || downSince.get() != 0 || epoch != ended.get()) {
            return;
        }
        long now = System.nanoTime();
        if (downSince.compareAndSet(0, now == 0 ? 1 : now)) {
            log.warn("{} is unreachable ({}): {}; requests are retried while their wait timeouts last, next log line when it answers",
                    store, client, oneLine(error));
        }
    }

    /** @return whether an outage is in progress */
    boolean down() {
        return downSince.get() != 0;
    }

    private static String oneLine(Throwable e) {
        String m = e.getMessage();
        return (m == null ? e.getClass().getSimpleName() : m).replace('\n', ' ');
    }
}
