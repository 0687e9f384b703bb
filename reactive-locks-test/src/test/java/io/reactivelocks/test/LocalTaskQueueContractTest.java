package io.reactivelocks.test;

import io.reactivelocks.local.LocalTaskStore;
import io.reactivelocks.spi.task.TaskStore;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The in-memory task store passes the whole task-queue contract: every queue shares one store. */
class LocalTaskQueueContractTest extends TaskQueueContract {

    private final LocalTaskStore store = new LocalTaskStore();

    @Override
    protected TaskStore newStore() {
        return store;
    }

    /** The in-memory store answers on the caller's thread: the first capturer woken may take every task. */
    @Override
    protected boolean capturersOverlapInTime() {
        return false;
    }

    @Override
    protected void assertNothingLeft(TaskStore check, Map<String, Set<String>> queues) {
        super.assertNothingLeft(check, queues);
        assertThat(store.size()).as("tasks left in the store").isZero();
    }
}
