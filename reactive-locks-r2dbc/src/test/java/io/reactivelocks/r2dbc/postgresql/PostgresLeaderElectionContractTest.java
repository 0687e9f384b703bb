package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LeaderElectionContract;
import io.reactivelocks.test.server.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link LeaderElectionContract} on a real PostgreSQL server. */
class PostgresLeaderElectionContractTest extends LeaderElectionContract {

    private static final String SCHEMA = "election_contract";

    private static ConnectionFactory factory;
    private static PostgresLockOptions options;

    @BeforeAll
    static void startServer() {
        PostgresServer pg = PostgresTestSupport.shared();
        factory = PostgresTestSupport.factory(pg);
        options = PostgresLockOptions.builder().schema(SCHEMA).channel("election_contract")
                .createSchemaOnFirstUse(false).poolMaxSize(4).build();
        PostgresLockBackend b = PostgresLockBackend.create(factory, options);
        b.migrate().block(PostgresTestSupport.TIMEOUT);
        b.close().block(PostgresTestSupport.TIMEOUT);
    }

    @AfterAll
    static void noRowsLeftAfterTheSuite() {
        assertThat(PostgresTestSupport.owned(factory, SCHEMA, options.table())).as("rows an owner left in the lock table").isZero();
        assertThat(PostgresTestSupport.countAfterPurge(factory, options)).as("rows left in the lock table after a purge").isZero();
    }

    @Override
    protected LockBackend newBackend() {
        return PostgresLockBackend.create(factory, options);
    }
}
