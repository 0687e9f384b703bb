package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.spi.GrantRequest;


import io.reactivelocks.spi.window.WindowGrant;
import io.reactivelocks.spi.window.WindowStore;
import java.time.Duration;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * Window claims on PostgreSQL ({@code window_claim.sql}): the window is {@code floor(server epoch
 * in µs / period)}, decided by the server's clock ({@code now()}) alone; one conditional upsert
 * per claim only advances the stored window of {@code (name, period)}, so the first caller of a
 * window wins and a stored window never goes back. The token is drawn from the lock sequence. Rows
 * live in the backend's window table, one per name and period. Uses the connections of its
 * {@link PostgresLockBackend}, which {@link #close()} closes when the store owns it.
 */
final class PostgresWindowStore implements WindowStore {

    private final PostgresLockBackend backend;
    private final boolean ownsBackend;

    /**
     * @param backend     whose connections, schema, table and sequence to use
     * @param ownsBackend whether {@link #close()} closes the backend (not when it is shared)
     */
    PostgresWindowStore(PostgresLockBackend backend, boolean ownsBackend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.ownsBackend = ownsBackend;
    }

    @Override
    public Mono<WindowGrant> claim(String name, Duration period) {
        long periodUs = period.toMillis() * 1000;
        return Mono.defer(() -> {
            String stored = TextEscapes.encode(name);
            String owner = GrantRequest.newOwner();
            return PostgresLockBackend.firstOfAll(backend.withSchema(backend.query(backend.windowClaimSql,
                            st -> st.bind(0, stored).bind(1, periodUs).bind(2, owner),
                            (row, md) -> new WindowGrant(row.get("window_no", Long.class), row.get("token", Long.class),
                                    Micros.remaining(row.get("remaining_us", Long.class))))))
                    .onErrorMap(e -> PostgresErrors.map(name, "window claim", e));
        });
    }

    @Override
    public Mono<Void> close() {
        return ownsBackend ? backend.close() : Mono.empty();
    }

    @Override
    public String toString() {
        return "PostgresWindowStore{" + backend + "}";
    }
}
