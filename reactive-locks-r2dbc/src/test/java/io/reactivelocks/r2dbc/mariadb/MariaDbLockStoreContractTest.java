package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Concept;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.LockStoreContract;
import io.r2dbc.spi.ConnectionFactory;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;

/** The store-session contract on a real MariaDB, and the session's one pool counted by the server. */
class MariaDbLockStoreContractTest extends LockStoreContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("store_session");

    @Override
    protected LockStore connect() {
        return MariaDbLocks.connect(MariaDbTestSupport.factory(), OPTIONS);
    }

    @Override
    protected Set<Concept> expectedConcepts() {
        return MariaDbStoreSession.OFFERED;
    }

    /** A factory whose connections open in {@code database}: the server's process list tells them from any other. */
    private static ConnectionFactory openingIn(String database) {
        var db = MariaDbTestSupport.shared();
        MariaDbTestSupport.exec("CREATE DATABASE IF NOT EXISTS `" + database + "`");
        return MariadbConnectionFactory.from(MariadbConnectionConfiguration.builder()
                .host(db.host()).port(db.port()).username(db.username()).password(db.password())
                .database(database).connectTimeout(Duration.ofSeconds(3)).build());
    }

    private static long connections(String database) {
        return ((Number) MariaDbTestSupport.sql("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ?", database)
                .get(0).get("n")).longValue();
    }

    @Test
    void everyConceptInUseAtOnceSharesOnePool() {
        String database = "store_conns";
        LockStore store = MariaDbLocks.connect(openingIn(database), OPTIONS);
        try {
            InUse inUse = everyConceptInUse(store, name("conns"));

            assertThat(connections(database)).as("the session's one pool (at most %d), wake-up polls included",
                    OPTIONS.poolMaxSize()).isBetween(1L, (long) OPTIONS.poolMaxSize());

            inUse.release();
        } finally {
            store.close().block(STEP);
        }
        await().atMost(STEP).untilAsserted(() -> assertThat(connections(database))
                .as("closing the session closes them all").isZero());
    }
}
