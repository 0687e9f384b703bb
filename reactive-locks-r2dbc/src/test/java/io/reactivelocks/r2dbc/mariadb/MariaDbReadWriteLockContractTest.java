package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.test.ReadWriteLockContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The read-write lock contract against a real MariaDB. */
class MariaDbReadWriteLockContractTest extends ReadWriteLockContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("rwlocks");
    private static final MariaDbLockBackend BACKEND = MariaDbLockBackend.create(MariaDbTestSupport.factory(), OPTIONS);

    /**
     * The tables first (a first operation through the SPI runs the store's first-use step), bounded generously:
     * the first statements on a fresh server may be slow on a loaded machine.
     */
    @BeforeAll
    static void migrate() {
        BACKEND.migrate().then(new MariaDbReadWriteStore(BACKEND).holders("warm-up")).block(java.time.Duration.ofSeconds(60));
    }

    @AfterAll
    static void closeBackend() {
        BACKEND.close().block(MariaDbTestSupport.TIMEOUT);
    }

    @Override
    protected ReadWriteStore newStore() {
        return new MariaDbReadWriteStore(BACKEND);
    }
}
