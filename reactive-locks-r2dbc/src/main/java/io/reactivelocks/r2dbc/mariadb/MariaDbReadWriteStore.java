package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
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
import reactor.util.retry.Retry;

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
final class MariaDbReadWriteStore implements ReadWriteStore {

    private static final int ROLLED_BACK_RETRIES = 3;

    private final MariaDbLockBackend backend;
    private final GrantTable grants;
    private final String guardSql;
    private final String purgeSql;
    private final String heldSql;
    private final String againSql;
    private final String intentSql;
    private final String insertSql;

    MariaDbReadWriteStore(MariaDbLockBackend backend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        MariaDbLockOptions o = backend.options();
        String tableName = tableName(o);
        Map<String, String> names = new HashMap<>(MariaDbLockBackend.names(o));
        names.put("rw_table", MariaDbSql.qualified(o.database(), tableName));
        names.put("grant_table", names.get("rw_table"));
        this.grants = new GrantTable(backend, "read-write lock", "r", tableName, "rwlock_schema.sql", names);
        this.guardSql = MariaDbSql.render("rwlock_guard.sql", names);
        this.purgeSql = MariaDbSql.render("rwlock_purge.sql", names);
        this.heldSql = MariaDbSql.render("rwlock_held.sql", names);
        this.againSql = MariaDbSql.render("rwlock_again.sql", names);
        this.intentSql = MariaDbSql.render("rwlock_intent.sql", names);
        this.insertSql = MariaDbSql.render("rwlock_insert.sql", names);
    }

    /** @return the read-write table's unquoted name: the lock table's with {@code _rw} */
    static String tableName(MariaDbLockOptions o) {
        return MariaDbLockBackend.derived(o.table(), "_rw");
    }

    @Override
    public String name() {
        return MariaDbErrors.BACKEND;
    }

    private record Row(String owner, char mode, long token, long remainingUs) {
        Holder holder() {
            return new Holder(owner, token, Duration.ofNanos(Math.max(0, remainingUs) * 1000));
        }
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
                                      Duration leaseTime) {
        return Mono.defer(() -> {
            String n = StoredText.encode(name);
            long ttl = Statements.micros(leaseTime);
            grants.asking(name, List.of(owner));
            boolean intent = mode == LockMode.WRITE && writerPreferring && waiting;
            return grants.ready(backend.inTransaction(c -> grant(c, n, owner, mode == LockMode.WRITE, writerPreferring, waiting,
                            ttl, leaseTime)))
                    .retryWhen(Retry.max(ROLLED_BACK_RETRIES).filter(MariaDbErrors::rolledBack))
                    .doOnNext(g -> {
                        grants.answered(name, List.of(owner), intent || g instanceof PermitGrant.Granted);
                        if (g instanceof PermitGrant.Granted) {
                            grants.announce(new LockEvent.Acquired(name, owner, 0));
                        }
                    });
        }).onErrorMap(e -> MariaDbErrors.map(name, "read-write grant", e));
    }

    private Mono<PermitGrant> grant(Connection c, String n, String owner, boolean write, boolean writerPreferring,
                                    boolean waiting, long ttl, Duration leaseTime) {
        return Statements.update(c, guardSql, st -> st.bind(0, n))
                .then(Statements.update(c, purgeSql, st -> st.bind(0, n)))
                .thenMany(rows(c, n))
                .collectList()
                .flatMap(rows -> {
                    for (Row r : rows) {
                        if (r.owner().equals(owner) && r.mode() != 'i') { // a retried request
                            return Statements.update(c, againSql, st -> st.bind(0, ttl).bind(1, n).bind(2, owner))
                                    .thenReturn((PermitGrant) new PermitGrant.Granted(List.of(r.token()), leaseTime));
                        }
                    }
                    boolean writer = rows.stream().anyMatch(r -> r.mode() == 'w');
                    boolean busy = write ? rows.stream().anyMatch(r -> r.mode() != 'i')
                            : writer || (writerPreferring && rows.stream().anyMatch(r -> r.mode() == 'i'));
                    if (busy) {
                        long wait = rows.stream().filter(r -> r.mode() != 'i' || (!write && !writer))
                                .mapToLong(Row::remainingUs).min().orElse(0);
                        PermitGrant.Busy answer = new PermitGrant.Busy(Duration.ofNanos(Math.max(0, wait) * 1000));
                        return write && writerPreferring && waiting
                                ? Statements.update(c, intentSql, st -> st.bind(0, n).bind(1, owner).bind(2, ttl)).thenReturn(answer)
                                : Mono.just(answer);
                    }
                    return Statements.first(c, insertSql, st -> st.bind(0, n).bind(1, owner).bind(2, write ? "w" : "r").bind(3, ttl),
                                    (row, md) -> Statements.number(row, "token"))
                            .map(t -> (PermitGrant) new PermitGrant.Granted(List.of(t), leaseTime));
                });
    }

    private Flux<Row> rows(Connection c, String n) {
        return Statements.rows(c, heldSql, st -> st.bind(0, n), (row, md) -> new Row(Statements.text(row, "owner"),
                String.valueOf(row.get("mode", String.class)).charAt(0), Statements.number(row, "token"),
                Statements.number(row, "remaining_us")));
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return grants.renew(batch);
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return grants.release(name, owner);
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

    /** A revocation request: a row the holder's poller reads (kept 10 seconds). */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return grants.revoke(name, owner, reason);
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return grants.events(name);
    }

    @Override
    public Mono<Void> close() {
        return Mono.defer(grants::close);
    }

    @Override
    public String toString() {
        return "MariaDbReadWriteStore{" + grants.table() + "}";
    }
}
