package io.reactivelocks.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.Connection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockBackend;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLocks;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The backend contract suite against MariaDB in a container started by {@link MariaDbLockContainer}.
 * Tagged {@code deep} as a whole (about 26 s with the container's start, over the build's budget for
 * this module): the build checks the container with {@code LockContainersTest}, and the contract runs
 * against the same Debian package in reactive-locks-r2dbc; run it here with
 * {@code -Dtestcontainers.excludedGroups=none -Dtest=MariaDbContainerContractTest}.
 */
@Tag(LockBackendContract.DEEP)
class MariaDbContainerContractTest extends LockBackendContract {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final MariaDbLockOptions OPTIONS = MariaDbLockOptions.builder().table("contract_locks")
            .sequence("contract_locks_seq").poolMaxSize(4).pollInterval(Duration.ofMillis(50)).build();
    private static MariaDbLockContainer db;

    @BeforeAll
    static void startContainer() {
        LocalImages.require();
        db = new MariaDbLockContainer(LocalImages.MARIADB);
        db.start();
        MariaDbLockBackend b = MariaDbLocks.backend(db.connectionFactory(), OPTIONS);
        b.migrate().block(TIMEOUT);
        b.close().block(TIMEOUT);
        // one grant and release before the timed tests: the first one of a cold JVM (driver classes,
        // the pool's first authenticated connection) can take longer than a 1.2 s lease
        LockClient warm = db.lockClient(OPTIONS, LockOptions.defaults());
        warm.acquire("warm-up").flatMap(Lease::release).then(warm.close()).block(TIMEOUT);
    }

    @AfterAll
    static void noRowsLeftThenStop() {
        if (db == null) {
            return;
        }
        try {
            Long rows = Mono.usingWhen(Mono.from(db.connectionFactory().create()),
                    (Connection c) -> Flux.from(c.createStatement("SELECT count(*) FROM " + OPTIONS.table()).execute())
                            .flatMap(r -> r.map((row, meta) -> row.get(0, Long.class))).next(),
                    Connection::close).block(TIMEOUT);
            assertThat(rows).as("rows left in the lock table").isZero();
        } finally {
            db.stop();
        }
    }

    @Override
    protected LockBackend newBackend() {
        return MariaDbLocks.backend(db.connectionFactory(), OPTIONS);
    }
}
