package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.MariaDbServer;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import reactor.core.scheduler.Scheduler;

/**
 * The MariaDB backend passes the whole contract against a real server. Each client gets its own
 * backend (its own pool and poller). After each test no row is left in the lock table for the names
 * the test used — not even an expired one — and after the suite the table is empty.
 */
class MariaDbLockBackendContractTest extends LockBackendContract {

    private static final String DATABASE = "contract";

    private static MariaDbLockOptions options;
    private static FaultProxy blackhole;

    @BeforeAll
    static void startServer() {
        MariaDbTestSupport.shared();
        options = MariaDbTestSupport.options(DATABASE);
        MariaDbLockBackend b = MariaDbLockBackend.create(MariaDbTestSupport.factory(), options);
        b.migrate().block(MariaDbTestSupport.TIMEOUT);
        b.close().block(MariaDbTestSupport.TIMEOUT);
    }

    @AfterAll
    static void noRowsLeftAfterTheSuite() {
        try {
            assertThat(MariaDbTestSupport.count(DATABASE, options.table())).as("rows left in the lock table").isZero();
        } finally {
            if (blackhole != null) {
                blackhole.close();
            }
        }
    }

    @Override
    protected LockBackend newBackend() {
        return MariaDbLockBackend.create(MariaDbTestSupport.factory(), options);
    }

    @Override
    protected LockBackend newBackend(Scheduler timers) {
        return MariaDbLockBackend.create(MariaDbTestSupport.factory(), options.mutate().scheduler(timers).build());
    }

    /** A real unreachable server: a proxy that accepts connections and never answers. */
    @Override
    protected LockBackend unreachableBackend() {
        MariaDbServer db = MariaDbTestSupport.shared();
        if (blackhole == null) {
            blackhole = FaultProxy.start(db.host(), db.port());
        }
        blackhole.blackhole();
        return MariaDbLockBackend.create(MariaDbTestSupport.factory(blackhole.host(), blackhole.port()), options);
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        for (String n : names) {
            assertThat(MariaDbTestSupport.sql("SELECT owner FROM `" + DATABASE + "`.`" + options.table() + "` WHERE name = ?",
                    StoredText.encode(n))).as("rows left in the lock table for %s", n).isEmpty();
        }
    }
}
