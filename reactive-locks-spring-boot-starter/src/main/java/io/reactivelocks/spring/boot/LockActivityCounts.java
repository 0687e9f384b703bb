package io.reactivelocks.spring.boot;

import io.reactivelocks.LockListener;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Counts what the health indicator reports besides reachability — renewal failures and losses of the auto-configured
 * client's leases, and the last loss's lock and reason — as one more listener of that client. A client the
 * application made itself is not counted ({@link #isCounting()} stays false).
 */
final class LockActivityCounts implements LockListenerFactory {

    private final AtomicReference<String> backend = new AtomicReference<>();
    private final AtomicLong renewalFailures = new AtomicLong();
    private final AtomicLong losses = new AtomicLong();
    private final AtomicReference<String> lastLoss = new AtomicReference<>();

    @Override
    public LockListener create(String store) {
        backend.set(store);
        return new LockListener() {
            @Override
            public void onRenewalFailed(String name, long token, Throwable error) {
                renewalFailures.incrementAndGet();
            }

            @Override
            public void onLost(String name, long token, String reason, Duration held) {
                losses.incrementAndGet();
                lastLoss.set("'" + name + "' (token " + token + "): " + reason);
            }

            @Override
            public String toString() {
                return "LockActivityCounts";
            }
        };
    }

    /** @return the auto-configured client's backend name ({@code "redis"}), or null for a client of the application's */
    String backend() {
        return backend.get();
    }

    /** @return whether the auto-configured client reports here */
    boolean isCounting() {
        return backend.get() != null;
    }

    /** @return the backend's name, renewal failures, losses and the last loss, for the health details */
    Map<String, Object> details() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("backend", backend.get());
        details.put("renewalFailures", renewalFailures.get());
        details.put("losses", losses.get());
        String last = lastLoss.get();
        if (last != null) {
            details.put("lastLoss", last);
        }
        return details;
    }
}
