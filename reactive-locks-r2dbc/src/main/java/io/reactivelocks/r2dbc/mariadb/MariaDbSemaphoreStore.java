package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
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
import reactor.util.retry.Retry;

/**
 * Semaphores on MariaDB: a table of permits {@code (name, owner, token, expires_at)} beside the lock
 * table ({@code <lock table>_permits}). A grant is one {@code READ COMMITTED} transaction that locks
 * the semaphore's guard row (owner {@code ''}), removes expired permits, reads the live ones and
 * inserts the new ones while at most N are held, each with a token from the lock sequence drawn under
 * that lock. Expiry is the server's clock. Waiters are woken by this store's own poller of the names
 * waited for, and at once by releases through this store. Uses the pool of its
 * {@link MariaDbLockBackend}, which it does not close.
 */
final class MariaDbSemaphoreStore implements SemaphoreStore {

    private static final int ROLLED_BACK_RETRIES = 3;

    private final MariaDbLockBackend backend;
    private final GrantTable grants;
    private final String guardSql;
    private final String purgeSql;
    private final String heldSql;
    private final String insertSql;
    private final String againSql;
    private final String holdersSql;

    MariaDbSemaphoreStore(MariaDbLockBackend backend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        MariaDbLockOptions o = backend.options();
        String tableName = tableName(o);
        Map<String, String> names = new HashMap<>(MariaDbLockBackend.names(o));
        names.put("permit_table", MariaDbSql.qualified(o.database(), tableName));
        names.put("grant_table", names.get("permit_table"));
        this.grants = new GrantTable(backend, "semaphore", "s", tableName, "semaphore_schema.sql", names);
        this.guardSql = MariaDbSql.render("semaphore_guard.sql", names);
        this.purgeSql = MariaDbSql.render("semaphore_purge.sql", names);
        this.heldSql = MariaDbSql.render("semaphore_held.sql", names);
        this.insertSql = MariaDbSql.render("semaphore_insert.sql", names);
        this.againSql = MariaDbSql.render("semaphore_again.sql", names);
        this.holdersSql = MariaDbSql.render("semaphore_holders.sql", names);
    }

    /** @return the permits table's unquoted name: the lock table's with {@code _permits} */
    static String tableName(MariaDbLockOptions o) {
        return MariaDbLockBackend.derived(o.table(), "_permits");
    }

    @Override
    public String name() {
        return MariaDbErrors.BACKEND;
    }

    private record Held(String owner, long token, long remainingUs) {
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return Mono.defer(() -> {
            String n = StoredText.encode(name);
            long ttl = Statements.micros(leaseTime);
            grants.asking(name, owners);
            return grants.ready(backend.inTransaction(c -> grant(c, n, owners, permits, ttl, leaseTime)))
                    .retryWhen(Retry.max(ROLLED_BACK_RETRIES).filter(MariaDbErrors::rolledBack))
                    .doOnNext(g -> {
                        grants.answered(name, owners, g instanceof PermitGrant.Granted);
                        if (g instanceof PermitGrant.Granted) {
                            grants.announce(new LockEvent.Acquired(name, owners.get(0), 0));
                        }
                    });
        }).onErrorMap(e -> MariaDbErrors.map(name, "semaphore grant", e));
    }

    private Mono<PermitGrant> grant(Connection c, String n, List<String> owners, int permits, long ttl, Duration leaseTime) {
        return Statements.update(c, guardSql, st -> st.bind(0, n))
                .then(Statements.update(c, purgeSql, st -> st.bind(0, n)))
                .thenMany(Statements.rows(c, heldSql, st -> st.bind(0, n), (row, md) -> new Held(
                        Statements.text(row, "owner"), Statements.number(row, "token"),
                        Statements.number(row, "remaining_us"))))
                .collectList()
                .flatMap(held -> {
                    Map<String, Long> tokens = new HashMap<>();
                    held.forEach(h -> tokens.put(h.owner(), h.token()));
                    if (tokens.containsKey(owners.get(0))) { // a retried request: its owners hold already
                        return Flux.fromIterable(owners)
                                .concatMap(o -> Statements.update(c, againSql, st -> st.bind(0, ttl).bind(1, n).bind(2, o)))
                                .then(Mono.fromCallable(() -> (PermitGrant) new PermitGrant.Granted(
                                        owners.stream().map(tokens::get).toList(), leaseTime)));
                    }
                    if (held.size() + owners.size() > permits) {
                        long wait = held.stream().mapToLong(Held::remainingUs).min().orElse(0);
                        return Mono.just((PermitGrant) new PermitGrant.Busy(Duration.ofNanos(Math.max(0, wait) * 1000)));
                    }
                    List<Long> granted = new ArrayList<>(owners.size());
                    return Flux.fromIterable(owners)
                            .concatMap(o -> Statements.first(c, insertSql, st -> st.bind(0, n).bind(1, o).bind(2, ttl),
                                            (row, md) -> Statements.number(row, "token"))
                                    .doOnNext(granted::add))
                            .then(Mono.fromCallable(() -> (PermitGrant) new PermitGrant.Granted(List.copyOf(granted), leaseTime)));
                });
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
    public Mono<List<Holder>> holders(String name) {
        return Mono.defer(() -> grants.ready(backend.query(holdersSql, st -> st.bind(0, StoredText.encode(name)),
                        (row, md) -> new Holder(Statements.text(row, "owner"), Statements.number(row, "token"),
                                Duration.ofNanos(Math.max(0, Statements.number(row, "remaining_us")) * 1000)))
                .collectList()))
                .onErrorMap(e -> MariaDbErrors.map(name, "semaphore read", e));
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
        return "MariaDbSemaphoreStore{" + grants.table() + "}";
    }
}
