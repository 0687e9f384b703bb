package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import reactor.core.publisher.Flux;
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
final class PostgresSemaphoreStore implements SemaphoreStore {

    private final PostgresLockBackend backend;
    private final boolean ownsBackend;
    private final ConceptSchema schema;
    private final String grantSql;
    private final GrantRows grantRows;
    private final String holdersSql;

    /**
     * @param backend     whose pool, listener, schema, table name and sequence to use
     * @param ownsBackend whether {@link #close()} closes the backend (not when it is shared)
     */
    PostgresSemaphoreStore(PostgresLockBackend backend, boolean ownsBackend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.ownsBackend = ownsBackend;
        Map<String, String> names = names(backend.options());
        this.schema = new ConceptSchema(backend, "semaphore", names.get("permit_table"), names.get("grant_fn"),
                SqlScripts.render("semaphore_schema.sql", names, true), SqlScripts.render("semaphore_check.sql", names, false));
        this.grantSql = SqlScripts.render("semaphore_grant.sql", names, false);
        this.grantRows = new GrantRows(backend, schema, "semaphore", names, PostgresSemaphoreStore::key);
        this.holdersSql = SqlScripts.render("semaphore_holders.sql", names, false);
    }

    /**
     * @param o the schema, lock table (the permits table's name derives from it) and sequence
     * @return the placeholder values of this store's scripts
     */
    static Map<String, String> names(PostgresLockOptions o) {
        String tableName = SqlIdentifiers.derived(o.table(), "_permits");
        Map<String, String> names = new HashMap<>();
        names.put("schema", SqlIdentifiers.quote(o.schema()));
        names.put("schema_name", o.schema());
        names.put("sequence", SqlIdentifiers.qualified(o.schema(), o.sequence()));
        names.put("permit_table", SqlIdentifiers.qualified(o.schema(), tableName));
        names.put("permit_pkey", SqlIdentifiers.quote(SqlIdentifiers.derived(tableName, "_pkey")));
        names.put("grant_fn", SqlIdentifiers.qualified(o.schema(), SqlIdentifiers.derived(tableName, "_grant")));
        PostgresLockBackend.watcherNames(o, names);
        return names;
    }

    /**
     * Creates the permits table and the grant function if missing; idempotent.
     *
     * @return a {@code Mono} that completes when they exist
     */
    Mono<Void> migrate() {
        return schema.migrate();
    }

    private <T> Mono<T> ready(Mono<T> work) {
        return schema.ready(work);
    }

    /** The listener's dispatch key of a semaphore: {@code \s} and the stored name (no lock name starts so). */
    private static String key(String storedName) {
        return "\\s" + storedName;
    }

    @Override
    public String name() {
        return "postgresql";
    }

    private record GrantRow(boolean granted, String owner, long token, long waitUs) {
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return ready(Mono.defer(() -> {
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
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return grantRows.renew(batch);
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return grantRows.release(name, owner);
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        return ready(Mono.defer(() -> backend.query(holdersSql, st -> st.bind(0, TextEscapes.encode(name)),
                        (row, md) -> new Holder(TextEscapes.decode(row.get("owner", String.class)), row.get("token", Long.class),
                                Duration.ofNanos(Math.max(0, row.get("remaining_us", Long.class)) * 1000)))
                .collectList()))
                .onErrorMap(e -> PostgresErrors.map(name, "semaphore read", e));
    }

    /** A revocation request: a {@code NOTIFY} under the name's key, as its releases. */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return backend.notifyRevocation(name, key(TextEscapes.encode(name)), owner, reason);
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return backend.semaphoreEvents(name, key(TextEscapes.encode(name)));
    }

    @Override
    public Mono<Void> close() {
        return ownsBackend ? backend.close() : Mono.empty();
    }

    @Override
    public String toString() {
        return "PostgresSemaphoreStore{" + schema.table() + "}";
    }
}
