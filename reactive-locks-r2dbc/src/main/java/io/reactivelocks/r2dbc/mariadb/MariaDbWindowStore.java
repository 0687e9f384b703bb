package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.window.WindowGrant;
import io.reactivelocks.spi.window.WindowStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Window claims on MariaDB: the window is {@code floor(server epoch in µs / period)}, decided by the
 * server's clock alone. A claim is one request: a compound statement whose {@code READ COMMITTED}
 * transaction locks the row of {@code (name, period)} ({@code <lock table>_windows}), reads the stored
 * window and the server's time, and advances the stored window only when it is older than the current one — so the first
 * caller of a window wins and a stored window never goes back. The token is drawn from the lock
 * sequence under that lock. Uses the pool of its {@link MariaDbLockBackend}, which it does not close.
 */
final class MariaDbWindowStore implements WindowStore {

    private static final int ROLLED_BACK_RETRIES = 3;
    private static final java.time.Duration FOREVER = java.time.Duration.ofMillis(Long.MAX_VALUE);

    private final MariaDbLockBackend backend;
    private final Mono<Void> ready;
    private final String claimSql;

    MariaDbWindowStore(MariaDbLockBackend backend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        MariaDbLockOptions o = backend.options();
        String tableName = tableName(o);
        Map<String, String> names = new HashMap<>(MariaDbLockBackend.names(o));
        names.put("window_table", MariaDbSql.qualified(o.database(), tableName));
        List<String> statements = MariaDbSql.statements("window_schema.sql", names);
        this.ready = Mono.defer(() -> backend.firstUse("window lock", List.of(tableName, o.sequence()), statements))
                .cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
        this.claimSql = MariaDbSql.render("window_claim.sql", names);
    }

    /** @return the window table's unquoted name: the lock table's with {@code _windows} */
    static String tableName(MariaDbLockOptions o) {
        return MariaDbLockBackend.derived(o.table(), "_windows");
    }

    @Override
    public Mono<WindowGrant> claim(String name, Duration period) {
        long periodUs = period.toMillis() * 1000;
        return Mono.defer(() -> {
            String n = StoredText.encode(name);
            String owner = GrantRequest.newOwner();
            return ready.then(backend.query(claimSql, st -> st.bind(0, n).bind(1, periodUs).bind(2, owner),
                            (row, md) -> Statements.number(row, "claimed") == 1
                                    ? Optional.of(new WindowGrant(Statements.number(row, "window_no"), Statements.number(row, "token"),
                                            Duration.ofNanos(Statements.number(row, "remaining_us") * 1000)))
                                    : Optional.<WindowGrant>empty()).next())
                    .flatMap(Mono::justOrEmpty)
                    .retryWhen(Retry.max(ROLLED_BACK_RETRIES).filter(MariaDbErrors::rolledBack));
        }).onErrorMap(e -> MariaDbErrors.map(name, "window claim", e));
    }

    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }

    @Override
    public String toString() {
        return "MariaDbWindowStore{" + backend + "}";
    }
}
