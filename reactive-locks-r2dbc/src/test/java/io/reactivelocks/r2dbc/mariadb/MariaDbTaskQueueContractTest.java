package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.test.TaskQueueContract;
import org.junit.jupiter.api.AfterAll;

/** The task-queue contract against a real MariaDB: every queue over a store of its own (its own poller). */
class MariaDbTaskQueueContractTest extends TaskQueueContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("task_contract");
    private static final MariaDbLockBackend BACKEND = MariaDbLockBackend.create(MariaDbTestSupport.factory(), OPTIONS);

    @AfterAll
    static void closeBackend() {
        BACKEND.close().block(MariaDbTestSupport.TIMEOUT);
    }

    @Override
    protected TaskStore newStore() {
        return new MariaDbTaskStore(BACKEND);
    }
}
