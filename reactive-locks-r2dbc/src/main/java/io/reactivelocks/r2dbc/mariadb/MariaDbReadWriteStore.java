package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Read-write locks on MariaDB: one table of grants and waiting writers' intents
 * {@code (name, owner, mode, token, expires_at)} beside the lock table ({@code <lock table>_rw}). A
 * grant is one {@code READ COMMITTED} transaction that locks the name's guard row, removes expired
 * rows, reads the live ones and decides: a reader is granted when no writer holds and (writer
 * preferring) no intent lives; a writer when nobody holds, else a waiting writer records its intent.
 * Tokens come from the lock sequence drawn under the guard's lock, so a writer's exceeds every
 * reader's before it and a reader's the last writer's. Waiters are woken by this store's poller and at
 * once by releases through it. Uses the pool of its {@link MariaDbLockBackend}, which it does not close.
 */
final class MariaDbReadWriteStore extends MariaDbGrantStore implements ReadWriteStore {

    private final String grantSql;
    private final String heldSql;

    MariaDbReadWriteStore(MariaDbLockBackend backend) {
        this(backend, names(Objects.requireNonNull(backend, "backend").options()));
    }

    private MariaDbReadWriteStore(MariaDbLockBackend backend, Map<String, String> names) {
        super(backend, "read-write lock", "r", tableName(backend.options()), "rwlock_schema.sql", names);
        this.grantSql = MariaDbSql.render("rwlock_grant.sql", names);
        this.heldSql = MariaDbSql.render("rwlock_held.sql", names);
    }

    /** @return the read-write table's unquoted name: the lock table's with {@code _rw} */
    static String tableName(MariaDbLockOptions o) {
        return MariaDbLockBackend.derived(o.table(), "_rw");
    }

    private static Map<String, String> names(MariaDbLockOptions o) {
        Map<String, String> names = new HashMap<>(MariaDbLockBackend.names(o));
        names.put("rw_table", MariaDbSql.qualified(o.database(), tableName(o)));
        names.put("grant_table", names.get("rw_table"));
        return names;
    }

    private record Row(String owner, char mode, long token, long remainingUs) {
        Holder holder() {
            return new Holder(owner, token, Micros.remaining(remainingUs));
        }
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
                                      Duration leaseTime) {
        return Mono.defer(() -> {
            String n = StoredText.encode(name);
            long ttl = Micros.of(leaseTime);
            boolean intent = mode == LockMode.WRITE && writerPreferring && waiting;
            return grant(name, List.of(owner), intent, c -> grant(c, n, owner, mode == LockMode.WRITE, writerPreferring, waiting,
                    ttl, leaseTime));
        }).onErrorMap(e -> MariaDbErrors.map(name, "read-write grant", e));
    }

    private Mono<PermitGrant> grant(Connection c, String n, String owner, boolean write, boolean writerPreferring,
                                    boolean waiting, long ttl, Duration leaseTime) {
        boolean intent = write && writerPreferring && waiting;
        return Statements.first(c, grantSql, st -> st.bind(0, n).bind(1, owner).bind(2, write ? 1 : 0)
                        .bind(3, writerPreferring ? 1 : 0).bind(4, intent ? 1 : 0).bind(5, ttl),
                (row, md) -> Statements.number(row, "granted") == 1
                        ? (PermitGrant) new PermitGrant.Granted(List.of(Statements.number(row, "token")), leaseTime)
                        : new PermitGrant.Busy(Micros.remaining(Statements.number(row, "wait_us"))))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("the read-write grant answered no row")));
    }

    private Flux<Row> rows(Connection c, String n) {
        return Statements.rows(c, heldSql, st -> st.bind(0, n), (row, md) -> new Row(Statements.text(row, "owner"),
                String.valueOf(row.get("mode", String.class)).charAt(0), Statements.number(row, "token"),
                Statements.number(row, "remaining_us")));
    }

    @Override
    public Mono<ReadWriteHolders> holders(String name) {
        return Mono.defer(() -> grants.ready(Mono.usingWhen(backend.connections(), c -> rows(c, StoredText.encode(name)).collectList(),
                        Connection::close)))
                .map(rows -> {
                    List<Holder> readers = new ArrayList<>();
                    List<Holder> intents = new ArrayList<>();
                    Holder writer = null;
                    for (Row r : rows) {
                        switch (r.mode()) {
                            case 'r' -> readers.add(r.holder());
                            case 'w' -> writer = r.holder();
                            default -> intents.add(r.holder());
                        }
                    }
                    return new ReadWriteHolders(readers, writer, intents);
                })
                .onErrorMap(e -> MariaDbErrors.map(name, "read-write read", e));
    }

}
