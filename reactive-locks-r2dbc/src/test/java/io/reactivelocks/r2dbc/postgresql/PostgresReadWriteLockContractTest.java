package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.test.ReadWriteLockContract;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/** The read-write lock contract against a real PostgreSQL, plus the PostgreSQL specifics: the rows and the server's clock. */
class PostgresReadWriteLockContractTest extends ReadWriteLockContract {

    private static final PostgresLockOptions OPTIONS = PostgresLockOptions.builder().schema("rwlocks")
            .channel("rwlock_events").poolMaxSize(4).build();

    private static ConnectionFactory factory;

    @BeforeAll
    static void migrate() {
        factory = PostgresTestSupport.factory(PostgresTestSupport.shared());
        PostgresReadWriteStore s = new PostgresReadWriteStore(PostgresLockBackend.create(factory, OPTIONS), true);
        s.migrate().block(java.time.Duration.ofSeconds(60)); // the first statement on a fresh server may be slow on a loaded machine
        s.close().block(PostgresTestSupport.TIMEOUT);
    }

    @Override
    protected ReadWriteStore newStore() {
        return new PostgresReadWriteStore(PostgresLockBackend.create(factory, OPTIONS), true);
    }

    @Test
    void grantsAndIntentsAreRowsWithSequenceTokensAndServerExpiry() {
        LockStore session = PostgresLocks.connect(factory, OPTIONS);
        ReadWriteLock rw = session.readWriteLocks(ReadWriteLockOptions.of(options()));
        String name = name("rows");
        String rowsSql = "SELECT owner, mode::text AS mode, token, expires_at > now() AS live,"
                + " expires_at <= now() + interval '1300 milliseconds' AS within_lease FROM rwlocks.reactive_locks_rw WHERE name = $1 ORDER BY token";
        try {
            Lease r = rw.read().acquire(name).block(STEP);
            AtomicReference<Lease> w = new AtomicReference<>();
            Disposable writer = rw.write().acquire(name).subscribe(w::set);
            await().atMost(STEP).until(() -> PostgresTestSupport.sql(factory, rowsSql, name).size() == 2);
            List<Map<String, Object>> rows = PostgresTestSupport.sql(factory, rowsSql, name);
            assertThat(rows.get(0)).as("the intent").containsEntry("mode", "i").containsEntry("token", 0L)
                    .containsEntry("live", true).containsEntry("within_lease", true);
            assertThat(rows.get(1)).as("the reader").containsEntry("owner", r.owner()).containsEntry("mode", "r")
                    .containsEntry("token", r.token()).containsEntry("live", true).containsEntry("within_lease", true);
            r.release().block(STEP);
            await().atMost(STEP).until(() -> w.get() != null);
            assertThat(PostgresTestSupport.sql(factory, rowsSql, name)).singleElement()
                    .satisfies(row -> assertThat(row).containsEntry("owner", w.get().owner()).containsEntry("mode", "w")
                            .containsEntry("token", w.get().token()));
            w.get().release().block(STEP);
            writer.dispose();
            assertThat(PostgresTestSupport.sql(factory, rowsSql, name)).isEmpty();
        } finally {
            session.close().block(STEP);
        }
    }
}
