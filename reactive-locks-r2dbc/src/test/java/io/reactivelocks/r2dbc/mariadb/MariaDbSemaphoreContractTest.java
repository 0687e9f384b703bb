package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import org.junit.jupiter.api.AfterAll;

/** The semaphore contract against a real MariaDB. */
class MariaDbSemaphoreContractTest extends SemaphoreContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("semaphores");
    private static final MariaDbLockBackend BACKEND = MariaDbLockBackend.create(MariaDbTestSupport.factory(), OPTIONS);

    @AfterAll
    static void closeBackend() {
        BACKEND.close().block(MariaDbTestSupport.TIMEOUT);
    }

    @Override
    protected SemaphoreStore newStore() {
        return new MariaDbSemaphoreStore(BACKEND);
    }
}
