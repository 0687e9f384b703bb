package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.MultiLockContract;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The multi-lock contract against a real redis-server. */
class RedisMultiLockContractTest extends MultiLockContract {

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
    protected LockBackend newBackend() {
        return redis.backend();
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        assertThat(redis.scanKeys()).as("lock keys left under %s", redis.prefix).noneMatch(k -> k.endsWith(":lock"));
    }
}
