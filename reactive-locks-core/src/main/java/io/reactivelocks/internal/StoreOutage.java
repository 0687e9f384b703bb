package io.reactivelocks.internal;

import io.reactivelocks.spi.BackendErrors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The reachability of one client's store, as its requests see it, for the log: one WARN line when
 * requests start failing with transient errors (the store is down, paused or unreachable), one INFO
 * line when it answers again — not a line per request. Decides nothing: the engine's retries and
 * timeouts do that. Not API.
 */
final class StoreOutage {

    private final Logger log;
    private final String store;
    private final String client;
    /** System.nanoTime() of the first failure of the current outage; 0 while the store answers. */
    private final AtomicLong downSince = new AtomicLong();

    StoreOutage(String store, String client) {
        this(store, client, Loggers.getLogger("io.reactivelocks.outage"));
    }

    StoreOutage(String store, String client, Logger log) {
        this.store = store;
        this.client = client;
        this.log = log;
    }

    /** A request was answered (granted, busy, renewed, released): an outage, if any, is over. */
    void answered() {
        if (downSince.get() == 0) {
            return; // the common case: one volatile read
        }
        long since = downSince.getAndSet(0);
        if (since != 0) {
            log.info("{} answers again ({}), after {} ms unreachable", store, client,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since));
        }
    }

    /** A request failed: a transient failure starts an outage (logged once); others are the caller's to report. */
    void failed(Throwable error) {
        if (!BackendErrors.isTransient(error) || downSince.get() != 0) {
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
