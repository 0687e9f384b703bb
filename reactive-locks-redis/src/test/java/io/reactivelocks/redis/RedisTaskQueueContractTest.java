package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.test.TaskQueueContract;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The task-queue contract against a real redis-server: every queue over a backend of its own. After
 * each test only the queues' fencing counters are left (they outlive the tasks on purpose).
 */
class RedisTaskQueueContractTest extends TaskQueueContract {

    private static RedisTestSupport redis;

    @BeforeAll
    static void startServer() {
        redis = RedisTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected TaskStore newStore() {
        return new RedisTaskStore(redis.backend(), true);
    }

    @Override
    protected void assertNothingLeft(TaskStore store, Map<String, Set<String>> queues) {
        super.assertNothingLeft(store, queues);
        assertThat(redis.scanKeys()).as("task keys left under %s", redis.prefix)
                .allMatch(k -> !k.contains("}:queue:") || k.endsWith("}:queue:fence"));
    }
}
