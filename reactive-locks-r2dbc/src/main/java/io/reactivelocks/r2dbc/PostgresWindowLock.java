package io.reactivelocks.r2dbc;

import io.reactivelocks.spi.GrantRequest;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;

/**
 * A window lock ("run this job once per hour across the fleet"; the "timeout" lock of the source
 * notes): at most one claim per name and period. The window is {@code floor(server epoch / period)},
 * decided by the server's clock alone; the first caller of a window wins (a conditional upsert that
 * only advances the stored window, {@code window_claim.sql}); nothing is ever released — the next
 * window is simply claimable again. Rows live in the backend's window table, one per name and
 * period.
 *
 * <pre>{@code
 * PostgresWindowLock hourly = PostgresWindowLock.create(backend);
 * hourly.tryClaim("report", Duration.ofHours(1)).flatMap(claim -> sendReport(claim.window()));
 * }</pre>
 *
 * <p>Uses the connections of the {@link PostgresLockBackend} it was created from and lives as
 * long as that backend.
 */
public final class PostgresWindowLock {

    static {
        GrantRequest.newOwner(); // seeds the owner-id generator on the thread creating the store, not on an event loop
    }

    private final PostgresLockBackend backend;

    private PostgresWindowLock(PostgresLockBackend backend) {
        this.backend = backend;
    }

    /**
     * @param backend the backend whose connections and tables to use
     * @return a window lock over {@code backend}
     */
    public static PostgresWindowLock create(PostgresLockBackend backend) {
        return new PostgresWindowLock(Objects.requireNonNull(backend, "backend"));
    }

    /**
     * Claims the current window of {@code name} for {@code period}. Each subscription is one
     * attempt (one statement) under a fresh owner id; cancelling does not recall a statement
     * already sent.
     *
     * @param name   the lock name: non-empty, at most 1024 UTF-8 bytes
     * @param period the window length: whole microseconds, at least 1 ms; the same name may be
     *               claimed independently with different periods
     * @return the claim when this call was the first of the window, empty when the window was
     *         claimed already; errors with {@link io.reactivelocks.LockBackendException}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when the name is empty or too long, or the period is shorter than 1 ms
     */
    public Mono<WindowClaim> tryClaim(String name, Duration period) {
        io.reactivelocks.spi.LockNames.check(name);
        Objects.requireNonNull(period, "period");
        if (period.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("period must be at least 1 ms, was " + period);
        }
        long periodUs = TimeUnit.MICROSECONDS.convert(period);
        Duration exact = Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(periodUs));
        return Mono.defer(() -> {
            String stored = TextEscapes.encode(name);
            String owner = GrantRequest.newOwner();
            return PostgresLockBackend.firstOfAll(backend.withSchema(backend.query(backend.windowClaimSql,
                            st -> st.bind(0, stored).bind(1, periodUs).bind(2, owner),
                            (row, md) -> new WindowClaim(name, exact, row.get("window_no", Long.class),
                                    row.get("token", Long.class),
                                    Duration.ofNanos(Math.max(0, row.get("remaining_us", Long.class)) * 1000)))))
                    .onErrorMap(e -> PostgresErrors.map(name, "window claim", e));
        });
    }
}
