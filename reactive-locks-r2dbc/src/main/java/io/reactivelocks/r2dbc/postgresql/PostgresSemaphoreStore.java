package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * Semaphores on PostgreSQL: a table of permits {@code (name, owner, token, expires_at)} beside the
 * lock table ({@code <lock table>_permits}) and a grant function that takes a per-name advisory
 * transaction lock, removes expired permits, counts the unexpired ones and inserts the new ones
 * while fewer than N remain, each with a token from the lock sequence ({@code semaphore_schema.sql}).
 * Expiry is the server's {@code now()}. Releases are announced with {@code NOTIFY} on the
 * backend's channel (key {@code \s<name>}, which no lock name has), so waiters wake without
 * polling. Uses the pool and listening connection of its {@link PostgresLockBackend}, which
 * {@link #close()} closes when the store owns it.
 */
final class PostgresSemaphoreStore extends PostgresGrantStore implements SemaphoreStore {

    private final String grantSql;
    private final String holdersSql;

    /**
     * @param backend     whose pool, listener, schema, table name and sequence to use
     * @param ownsBackend whether {@link #close()} closes the backend (not when it is shared)
     */
    PostgresSemaphoreStore(PostgresLockBackend backend, boolean ownsBackend) {
        this(backend, ownsBackend, names(Objects.requireNonNull(backend, "backend").options()));
    }

    private PostgresSemaphoreStore(PostgresLockBackend backend, boolean ownsBackend, Map<String, String> names) {
        super(backend, ownsBackend, "semaphore", "permit_table", "semaphore_schema.sql", names, PostgresSemaphoreStore::key);
        this.grantSql = SqlScripts.render("semaphore_grant.sql", names, false);
        this.holdersSql = SqlScripts.render("semaphore_holders.sql", names, false);
    }

    /**
     * @param o the schema, lock table (the permits table's name derives from it) and sequence
     * @return the placeholder values of this store's scripts
     */
    static Map<String, String> names(PostgresLockOptions o) {
        return grantNames(o, "_permits", "permit_table", "permit_pkey");
    }

    /** The listener's dispatch key of a semaphore: {@code \s} and the stored name (no lock name starts so). */
    private static String key(String storedName) {
        return "\\s" + storedName;
    }

    private record GrantRow(boolean granted, String owner, long token, long waitUs) {
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return schema.ready(Mono.defer(() -> {
            String stored = TextEscapes.encode(name);
            String[] storedOwners = owners.stream().map(TextEscapes::encode).toArray(String[]::new);
            long ttlUs = Math.max(1, leaseTime.toNanos() / 1000);
            return backend.query(grantSql, st -> st.bind(0, stored).bind(1, storedOwners).bind(2, permits).bind(3, ttlUs)
                                    .bind(4, backend.options().channel()).bind(5, key(stored)),
                            (row, md) -> new GrantRow(Boolean.TRUE.equals(row.get("granted", Boolean.class)),
                                    row.get("owner", String.class), row.get("token", Long.class), row.get("wait_us", Long.class)))
                    .collectList();
        })).onErrorMap(e -> PostgresErrors.map(name, "semaphore grant", e)).map(rows -> {
            if (rows.isEmpty() || !rows.get(0).granted()) {
                long wait = rows.isEmpty() ? 0 : Math.max(0, rows.get(0).waitUs());
                return new PermitGrant.Busy(Duration.ofNanos(wait * 1000));
            }
            Map<String, Long> byOwner = new HashMap<>();
            rows.forEach(r -> byOwner.put(TextEscapes.decode(r.owner()), r.token()));
            List<Long> tokens = new ArrayList<>(owners.size());
            for (String o : owners) {
                Long t = byOwner.get(o);
                if (t == null) {
                    throw new IllegalStateException("grant of semaphore '" + name + "' returned no token for an owner");
                }
                tokens.add(t);
            }
            return new PermitGrant.Granted(tokens, leaseTime);
        });
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        return schema.ready(Mono.defer(() -> backend.query(holdersSql, st -> st.bind(0, TextEscapes.encode(name)),
                        (row, md) -> new Holder(TextEscapes.decode(row.get("owner", String.class)), row.get("token", Long.class),
                                Micros.remaining(row.get("remaining_us", Long.class))))
                .collectList()))
                .onErrorMap(e -> PostgresErrors.map(name, "semaphore read", e));
    }

}
