package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockStore;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The semaphore contract against a real PostgreSQL, plus the PostgreSQL specifics: the rows and the server's clock. */
class PostgresSemaphoreContractTest extends SemaphoreContract {

    private static final PostgresLockOptions OPTIONS = PostgresLockOptions.builder().schema("semaphores")
            .channel("semaphore_events").poolMaxSize(4).build();

    private static ConnectionFactory factory;

    @BeforeAll
    static void migrate() {
        factory = PostgresTestSupport.factory(PostgresTestSupport.shared());
        PostgresSemaphoreStore s = new PostgresSemaphoreStore(PostgresLockBackend.create(factory, OPTIONS), true);
        s.migrate().block(PostgresTestSupport.TIMEOUT);
        s.close().block(PostgresTestSupport.TIMEOUT);
    }

    @Override
    protected SemaphoreStore newStore() {
        return new PostgresSemaphoreStore(PostgresLockBackend.create(factory, OPTIONS), true);
    }

    @Test
    void permitsAreRowsWithSequenceTokensAndServerExpiry() {
        LockStore session = PostgresLocks.connect(factory, OPTIONS);
        Semaphore s = session.semaphores(options());
        String name = name("rows");
        try {
            Lease a = s.acquire(name, 2).block(STEP);
            Lease b = s.acquire(name, 2).block(STEP);
            List<Map<String, Object>> rows = PostgresTestSupport.sql(factory,
                    "SELECT owner, token, expires_at > now() AS live, expires_at <= now() + interval '1300 milliseconds' AS within_lease"
                            + " FROM semaphores.reactive_locks_permits WHERE name = $1 ORDER BY token", name);
            assertThat(rows).hasSize(2);
            assertThat(rows.get(0)).containsEntry("owner", a.owner()).containsEntry("token", a.token())
                    .containsEntry("live", true).containsEntry("within_lease", true);
            assertThat(rows.get(1)).containsEntry("owner", b.owner()).containsEntry("token", b.token());
            a.release().block(STEP);
            b.release().block(STEP);
            assertThat(PostgresTestSupport.sql(factory, "SELECT 1 FROM semaphores.reactive_locks_permits WHERE name = $1", name)).isEmpty();
        } finally {
            session.close().block(STEP);
        }
    }
}
