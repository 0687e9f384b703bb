package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The semaphore contract against a real MariaDB. */
class MariaDbSemaphoreContractTest extends SemaphoreContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("semaphores");
    private static final MariaDbLockBackend BACKEND = MariaDbLockBackend.create(MariaDbTestSupport.factory(), OPTIONS);

    /**
     * The tables first (a first operation through the SPI runs the store's first-use step), bounded generously:
     * the first statements on a fresh server may be slow on a loaded machine.
     */
    @BeforeAll
    static void migrate() {
        BACKEND.migrate().then(new MariaDbSemaphoreStore(BACKEND).holders("warm-up")).block(java.time.Duration.ofSeconds(60));
    }

    @AfterAll
    static void closeBackend() {
        BACKEND.close().block(MariaDbTestSupport.TIMEOUT);
    }

    @Override
    protected SemaphoreStore newStore() {
        return new MariaDbSemaphoreStore(BACKEND);
    }
}
