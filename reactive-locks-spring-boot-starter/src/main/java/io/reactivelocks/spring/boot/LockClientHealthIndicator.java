package io.reactivelocks.spring.boot;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientMetrics;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import reactor.core.publisher.Mono;

/**
 * The lock store's health as the lock client sees it: UP when one read of a fixed lock name ({@code inspect}, which
 * writes nothing) answers within the timeout, DOWN with the error when it fails or times out. The details say how
 * many leases the client holds and how many acquires it is working on, and — for the auto-configured client — the
 * backend, the renewal failures and losses so far and the last loss.
 */
final class LockClientHealthIndicator implements ReactiveHealthIndicator {

    private final LockClient client;
    private final LockActivityCounts counts;
    private final String probeName;
    private final Duration timeout;

    /**
     * @param client    the lock client
     * @param counts    the auto-configured client's counts, or {@code null}
     * @param probeName the lock name read
     * @param timeout   how long the read may take
     */
    LockClientHealthIndicator(LockClient client, LockActivityCounts counts, String probeName, Duration timeout) {
        this.client = Objects.requireNonNull(client, "client");
        this.counts = counts;
        this.probeName = Objects.requireNonNull(probeName, "probeName");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    /** Reads the probe lock on subscribe; never errors (a failure is a DOWN health). Cancel drops the read. */
    @Override
    public Mono<Health> health() {
        return Mono.defer(() -> client.inspect(probeName))
                .timeout(timeout)
                .map(state -> Health.up().withDetails(details()).build())
                .onErrorResume(e -> Mono.just(Health.down(e).withDetails(details()).build()));
    }

    private Map<String, Object> details() {
        Map<String, Object> details = new LinkedHashMap<>();
        if (counts != null && counts.isCounting()) {
            details.putAll(counts.details());
        }
        LockClientMetrics metrics = client.metrics();
        details.put("heldLeases", metrics.heldLeaseCount());
        details.put("pendingAcquires", metrics.pendingAcquireCount());
        return details;
    }
}
