package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.reactivelocks.Concept;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.LockStoreContract;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The store-session contract on a real PostgreSQL, and the session's one pool and one LISTEN connection counted by the server. */
class PostgresLockStoreContractTest extends LockStoreContract {

    private static final PostgresLockOptions PG = PostgresLockOptions.builder().schema("store_session").poolMaxSize(3).build();

    @Override
    protected LockStore connect() {
        return PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()), PG);
    }

    @Override
    protected Set<Concept> expectedConcepts() {
        return EnumSet.allOf(Concept.class);
    }

    private static PostgresqlConnectionFactory named(String applicationName) {
        PostgresServer pg = PostgresTestSupport.shared();
        return new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                .host(pg.host()).port(pg.port()).username(pg.username()).password(pg.password())
                .database(pg.database()).connectTimeout(Duration.ofSeconds(3))
                .applicationName(applicationName).build());
    }

    private static long connections(String applicationName) {
        return ((Number) PostgresTestSupport.sql(PostgresTestSupport.factory(PostgresTestSupport.shared()),
                "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1", applicationName)
                .get(0).get("n")).longValue();
    }

    @Test
    void everyConceptInUseAtOnceSharesOnePoolAndOneListeningConnection() {
        String app = name("session");
        // the listening connection gets a name of its own, so that the server tells it from the pool's
        LockStore store = PostgresLocks.connect(named(app), PG.mutate().listenerConnectionFactory(named(app + "-listen")).build());
        try {
            InUse inUse = everyConceptInUse(store, name("conns"));

            await().atMost(STEP).until(() -> connections(app + "-listen") >= 1);
            assertThat(connections(app + "-listen")).as("one LISTEN connection for every concept").isEqualTo(1);
            assertThat(connections(app)).as("the session's one pool (at most 3)").isBetween(1L, 3L);

            inUse.release();
        } finally {
            store.close().block(STEP);
        }
        // the server ends a backend process shortly after its client closed the connection
        await().atMost(STEP).untilAsserted(() -> assertThat(connections(app) + connections(app + "-listen"))
                .as("closing the session closes them all").isZero());
    }
}
