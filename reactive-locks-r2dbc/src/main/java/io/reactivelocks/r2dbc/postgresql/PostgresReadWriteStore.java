package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * Read-write locks on PostgreSQL: a table {@code (name, owner, mode, token, expires_at)} beside the
 * lock table ({@code <lock table>_rw}) with one row per reader ('r'), writer ('w') or waiting
 * writer's intent ('i', token 0), and a grant function that takes a per-name advisory transaction
 * lock, removes expired rows and grants or records the intent in the same transaction, each grant
 * with a token from the lock sequence ({@code rwlock_schema.sql}). Renewal and release are the
 * semaphore's statements on this table. Expiry is the server's {@code now()}. Releases are
 * announced with {@code NOTIFY} on the backend's channel (key {@code \w<name>}, which no lock name
 * has), so waiters wake without polling. Uses the pool and listening connection of its
 * {@link PostgresLockBackend}, which {@link #close()} closes when the store owns it.
 */
final class PostgresReadWriteStore extends PostgresGrantStore implements ReadWriteStore {

    private final String grantSql;
    private final String holdersSql;

    /**
     * @param backend     whose pool, listener, schema, table name and sequence to use
     * @param ownsBackend whether {@link #close()} closes the backend (not when it is shared)
     */
    PostgresReadWriteStore(PostgresLockBackend backend, boolean ownsBackend) {
        this(backend, ownsBackend, names(Objects.requireNonNull(backend, "backend").options()));
    }

    private PostgresReadWriteStore(PostgresLockBackend backend, boolean ownsBackend, Map<String, String> names) {
        super(backend, ownsBackend, "read-write lock", "rw_table", "rwlock_schema.sql", names, PostgresReadWriteStore::key);
        this.grantSql = SqlScripts.render("rwlock_grant.sql", names, false);
        this.holdersSql = SqlScripts.render("rwlock_holders.sql", names, false);
    }

    /**
     * @param o the schema, lock table (the grants table's name derives from it) and sequence
     * @return the placeholder values of this store's scripts
     */
    static Map<String, String> names(PostgresLockOptions o) {
        Map<String, String> names = grantNames(o, "_rw", "rw_table", "rw_pkey");
        names.put("permit_table", names.get("rw_table")); // the semaphore's renew and release statements run on this table
        return names;
    }

    /** The listener's dispatch key of a read-write lock: {@code \w} and the stored name (no lock name starts so). */
    private static String key(String storedName) {
        return "\\w" + storedName;
    }

    private record GrantRow(boolean granted, long token, long waitUs) {
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
            Duration leaseTime) {
        return schema.ready(Mono.defer(() -> {
            String stored = TextEscapes.encode(name);
            long ttlUs = Math.max(1, leaseTime.toNanos() / 1000);
            return PostgresLockBackend.firstOfAll(backend.query(grantSql, st -> st.bind(0, stored).bind(1, TextEscapes.encode(owner))
                                    .bind(2, mode == LockMode.READ ? "r" : "w").bind(3, writerPreferring).bind(4, waiting).bind(5, ttlUs)
                                    .bind(6, backend.options().channel()).bind(7, key(stored)),
                            (row, md) -> new GrantRow(Boolean.TRUE.equals(row.get("granted", Boolean.class)),
                                    row.get("token", Long.class), row.get("wait_us", Long.class))));
        })).onErrorMap(e -> PostgresErrors.map(name, "read-write lock grant", e))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("grant of read-write lock '" + name + "' returned no row")))
                .map(r -> r.granted() ? new PermitGrant.Granted(List.of(r.token()), leaseTime)
                        : new PermitGrant.Busy(Micros.remaining(r.waitUs())));
    }

    private record Row(String owner, String mode, long token, long remainingUs) {
    }

    @Override
    public Mono<ReadWriteHolders> holders(String name) {
        return schema.ready(Mono.defer(() -> backend.query(holdersSql, st -> st.bind(0, TextEscapes.encode(name)),
                        (row, md) -> new Row(TextEscapes.decode(row.get("owner", String.class)), row.get("mode", String.class),
                                row.get("token", Long.class), row.get("remaining_us", Long.class)))
                .collectList()))
                .onErrorMap(e -> PostgresErrors.map(name, "read-write lock read", e))
                .map(rows -> {
                    List<Holder> readers = new ArrayList<>();
                    List<Holder> waiting = new ArrayList<>();
                    Holder writer = null;
                    for (Row r : rows) {
                        Holder h = new Holder(r.owner(), r.token(), Micros.remaining(r.remainingUs()));
                        switch (r.mode()) {
                            case "w" -> writer = h;
                            case "i" -> waiting.add(h);
                            default -> readers.add(h);
                        }
                    }
                    return new ReadWriteHolders(readers, writer, waiting);
                });
    }

}
