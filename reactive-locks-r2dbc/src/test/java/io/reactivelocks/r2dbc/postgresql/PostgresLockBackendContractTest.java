package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.PostgresServer;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import reactor.core.scheduler.Scheduler;

/**
 * The PostgreSQL backend passes the whole contract against a real server. Each client gets its
 * own backend (its own pool and listening connection). After each test no row is left in the lock
 * table for the names the test used — not even an expired one — and after the suite the table is
 * empty.
 */
class PostgresLockBackendContractTest extends LockBackendContract {

    private static final String SCHEMA = "contract";

    private static PostgresServer pg;
    private static ConnectionFactory factory;
    private static PostgresLockOptions options;
    private static FaultProxy blackhole;

    @BeforeAll
    static void startServer() {
        pg = PostgresTestSupport.shared();
        factory = PostgresTestSupport.factory(pg);
        options = PostgresLockOptions.builder().schema(SCHEMA).channel("contract_locks")
                .createSchemaOnFirstUse(false).poolMaxSize(4).build();
        PostgresLockBackend b = PostgresLockBackend.create(factory, options);
        b.migrate().block(PostgresTestSupport.TIMEOUT);
        b.close().block(PostgresTestSupport.TIMEOUT);
    }

    @AfterAll
    static void noRowsLeftAfterTheSuite() {
        try {
            assertThat(PostgresTestSupport.owned(factory, SCHEMA, options.table())).as("rows an owner left in the lock table").isZero();
            assertThat(PostgresTestSupport.countAfterPurge(factory, options)).as("rows left in the lock table after a purge").isZero();
        } finally {
            if (blackhole != null) {
                blackhole.close();
            }
        }
    }

    @Override
    protected LockBackend newBackend() {
        return PostgresLockBackend.create(factory, options);
    }

    @Override
    protected LockBackend newBackend(Scheduler timers) {
        return PostgresLockBackend.create(factory, options.mutate().scheduler(timers).build());
    }

    /** A real unreachable server: a proxy that accepts connections and never answers. */
    @Override
    protected LockBackend unreachableBackend() {
        if (blackhole == null) {
            blackhole = FaultProxy.start(pg.host(), pg.port());
        }
        blackhole.blackhole();
        return PostgresLockBackend.create(PostgresTestSupport.factory(pg, pg.username(), pg.password(),
                blackhole.host(), blackhole.port()), options);
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        String[] stored = names.stream().map(TextEscapes::encode).toArray(String[]::new);
        List<?> rows = PostgresTestSupport.sql(factory, "SELECT name, owner, token, expires_at FROM "
                + SqlIdentifiers.qualified(SCHEMA, options.table()) + " WHERE name = ANY($1::text[]) AND owner <> ''", (Object) stored);
        assertThat(rows).as("rows an owner left in the lock table for the test's names (a released row stays, freed)").isEmpty();
    }
}
