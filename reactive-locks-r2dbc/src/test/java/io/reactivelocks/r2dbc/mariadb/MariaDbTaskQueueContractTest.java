package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.test.TaskQueueContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The task-queue contract against a real MariaDB: every queue over a store of its own (its own poller). */
class MariaDbTaskQueueContractTest extends TaskQueueContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("task_contract");
    private static final MariaDbLockBackend BACKEND = MariaDbLockBackend.create(MariaDbTestSupport.factory(), OPTIONS);

    /**
     * The tables first (a first operation through the SPI runs the store's first-use step), bounded generously:
     * the first statements on a fresh server may be slow on a loaded machine.
     */
    @BeforeAll
    static void migrate() {
        BACKEND.migrate().then(new MariaDbTaskStore(BACKEND).status("warm-up", "no task")).block(java.time.Duration.ofSeconds(60));
    }

    @AfterAll
    static void closeBackend() {
        BACKEND.close().block(MariaDbTestSupport.TIMEOUT);
    }

    @Override
    protected TaskStore newStore() {
        return new MariaDbTaskStore(BACKEND);
    }
}
