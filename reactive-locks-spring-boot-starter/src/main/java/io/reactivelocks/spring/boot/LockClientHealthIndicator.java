package io.reactivelocks.spring.boot;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockClientMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import reactor.core.publisher.Mono;

/**
 * The lock store's health as the lock client sees it: UP when one read of a fixed lock name ({@code inspect}, which
 * writes nothing) answers within the timeout, DOWN when it fails or times out. A DOWN health says in words what
 * happened ({@code error}: "redis did not answer within 2 s", the shorter of the check's timeout and the client's
 * request timeout) and {@code since} when: the time of the first failed
 * check of the current outage, kept until a check succeeds again. The details also say how many leases the client
 * holds and how many acquires it is working on, and — for the auto-configured client — the backend, the renewal
 * failures and losses so far and the last loss.
 */
final class LockClientHealthIndicator implements ReactiveHealthIndicator {

    private final LockClient client;
    private final LockActivityCounts counts;
    private final String probeName;
    private final Duration timeout;
    /** The wall clock of {@code since}, which is for people to read: no decision depends on it. */
    private final Clock clock = Clock.systemUTC();
    /** The time of the first failed check of the current outage; null while the store answers. */
    private final AtomicReference<Instant> downSince = new AtomicReference<>();

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

    /**
     * Reads the probe lock on subscribe; never errors (a failure is a DOWN health). Cancel drops the read.
     *
     * <p>The read's failure becomes a DOWN health <em>before</em> the check's own timer: when that timer and the
     * client's request timeout end at the same moment (the same setting, say), the read's late failure is then a
     * value nobody waits for any more, dropped quietly, not an error handed to Reactor's dropped-error hook (which
     * logs it with its stack trace at ERROR, once per check during an outage).
     */
    @Override
    public Mono<Health> health() {
        return Mono.defer(() -> client.inspect(probeName))
                .map(state -> {
                    downSince.set(null);
                    return Health.up().withDetails(details()).build();
                })
                .onErrorResume(e -> Mono.just(down(e)))
                .timeout(timeout, Mono.fromSupplier(() -> down(new TimeoutException("no answer within " + timeout))));
    }

    private Health down(Throwable e) {
        Instant since = downSince.updateAndGet(first -> first != null ? first : clock.instant());
        return Health.down()
                .withDetail("error", inWords(e))
                .withDetail("since", since.toString())
                .withDetails(details())
                .build();
    }

    /** @return what went wrong, as a sentence naming the store */
    private String inWords(Throwable e) {
        String store = counts != null && counts.backend() != null ? counts.backend() : "the lock store";
        if (e instanceof TimeoutException) {
            return store + " did not answer within " + DurationWords.of(timeout);
        }
        if (e instanceof LockClientClosedException) {
            return "the lock client is closed";
        }
        if (e instanceof LockBackendException && e.getCause() instanceof TimeoutException) {
            // the client's own request timeout ended the read before the check's
            return store + " did not answer within " + DurationWords.of(client.options().requestTimeout());
        }
        String message = e.getMessage();
        if (e instanceof LockBackendException && message != null && !message.isBlank()) {
            return message; // names the store, the operation and the reason
        }
        return store + " failed: " + (message == null || message.isBlank() ? e.getClass().getName() : message);
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
