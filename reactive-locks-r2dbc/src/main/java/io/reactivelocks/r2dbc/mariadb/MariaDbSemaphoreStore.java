package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;

/**
 * Semaphores on MariaDB: a table of permits {@code (name, owner, token, expires_at)} beside the lock
 * table ({@code <lock table>_permits}). A grant is one {@code READ COMMITTED} transaction that locks
 * the semaphore's guard row (owner {@code ''}), removes expired permits, reads the live ones and
 * inserts the new ones while at most N are held, each with a token from the lock sequence drawn under
 * that lock. Expiry is the server's clock. Waiters are woken by this store's own poller of the names
 * waited for, and at once by releases through this store. Uses the pool of its
 * {@link MariaDbLockBackend}, which it does not close.
 */
final class MariaDbSemaphoreStore extends MariaDbGrantStore implements SemaphoreStore {

    private final Map<String, String> names;
    /** The grant statement per number of owners asking at once (one, nearly always). */
    private final Map<Integer, String> grantSql = new ConcurrentHashMap<>();
    private final String holdersSql;

    MariaDbSemaphoreStore(MariaDbLockBackend backend) {
        this(backend, names(Objects.requireNonNull(backend, "backend").options()));
    }

    private MariaDbSemaphoreStore(MariaDbLockBackend backend, Map<String, String> names) {
        super(backend, "semaphore", "s", tableName(backend.options()), "semaphore_schema.sql", names);
        this.names = names;
        this.holdersSql = MariaDbSql.render("semaphore_holders.sql", names);
        grantSql(1);
    }

    /** @return the grant statement for {@code owners} owners asking at once */
    private String grantSql(int owners) {
        return grantSql.computeIfAbsent(owners, k -> {
            Map<String, String> values = new HashMap<>(names);
            values.put("owner_marks", MariaDbSql.marks(k));
            values.put("owner_count", Integer.toString(k));
            values.put("owner_rows", String.join(", ", Collections.nCopies(k,
                    "(v_name, ?, NEXTVAL(" + names.get("sequence") + "), UTC_TIMESTAMP(6) + INTERVAL v_ttl MICROSECOND)")));
            return MariaDbSql.render("semaphore_grant.sql", values);
        });
    }

    /** @return the permits table's unquoted name: the lock table's with {@code _permits} */
    static String tableName(MariaDbLockOptions o) {
        return MariaDbLockBackend.derived(o.table(), "_permits");
    }

    private static Map<String, String> names(MariaDbLockOptions o) {
        Map<String, String> names = new HashMap<>(MariaDbLockBackend.names(o));
        names.put("permit_table", MariaDbSql.qualified(o.database(), tableName(o)));
        names.put("grant_table", names.get("permit_table"));
        return names;
    }

    private record Answer(boolean granted, String owner, long token, long waitUs) {
    }

    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return Mono.defer(() -> {
            String n = StoredText.encode(name);
            long ttl = Micros.of(leaseTime);
            String sql = grantSql(owners.size());
            return grant(name, owners, false, c -> Statements.rows(c, sql, st -> {
                        st.bind(0, n).bind(1, permits).bind(2, ttl).bind(3, owners.get(0));
                        int i = 4;
                        for (int round = 0; round < 3; round++) { // the renewal, the new permits, the answer
                            for (String o : owners) {
                                st.bind(i++, o);
                            }
                        }
                    }, (row, md) -> new Answer(Statements.number(row, "granted") == 1, Statements.text(row, "owner"),
                            Statements.number(row, "token"), Statements.number(row, "wait_us")))
                    .collectList()
                    .map(answers -> answer(owners, answers, leaseTime)));
        }).onErrorMap(e -> MariaDbErrors.map(name, "semaphore grant", e));
    }

    private static PermitGrant answer(List<String> owners, List<Answer> answers, Duration leaseTime) {
        if (answers.isEmpty() || !answers.get(0).granted()) {
            return new PermitGrant.Busy(Micros.remaining(answers.isEmpty() ? 0 : answers.get(0).waitUs()));
        }
        Map<String, Long> tokens = new HashMap<>();
        answers.forEach(a -> tokens.put(a.owner(), a.token()));
        List<Long> granted = new ArrayList<>(owners.size());
        for (String o : owners) {
            Long token = tokens.get(o);
            if (token == null) {
                throw new IllegalStateException("the semaphore grant answered no permit for owner '" + o + "'");
            }
            granted.add(token);
        }
        return new PermitGrant.Granted(List.copyOf(granted), leaseTime);
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        return Mono.defer(() -> grants.ready(backend.query(holdersSql, st -> st.bind(0, StoredText.encode(name)),
                        (row, md) -> new Holder(Statements.text(row, "owner"), Statements.number(row, "token"),
                                Micros.remaining(Statements.number(row, "remaining_us"))))
                .collectList()))
                .onErrorMap(e -> MariaDbErrors.map(name, "semaphore read", e));
    }

}
