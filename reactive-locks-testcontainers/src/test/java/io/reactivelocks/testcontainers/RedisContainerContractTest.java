package io.reactivelocks.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanIterator;
import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The backend contract suite against Redis in a container started by {@link RedisLockContainer}. */
class RedisContainerContractTest extends LockBackendContract {

    private static final String PREFIX = "rltc:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private static RedisLockContainer redis;

    @BeforeAll
    static void startContainer() {
        LocalImages.require();
        redis = new RedisLockContainer(LocalImages.REDIS);
        redis.start();
    }

    @AfterAll
    static void stopContainer() {
        if (redis != null) {
            redis.stop();
        }
    }

    @Override
    protected LockBackend newBackend() {
        return RedisLocks.backend(redis.redisClient(), RedisLockOptions.builder().keyPrefix(PREFIX).build());
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        List<String> keys = new ArrayList<>();
        try (StatefulRedisConnection<String, String> c = redis.redisClient().connect()) {
            ScanIterator.scan(c.sync(), ScanArgs.Builder.matches(PREFIX + "*").limit(500)).forEachRemaining(keys::add);
        }
        assertThat(keys).as("lock keys left under %s", PREFIX).noneMatch(k -> k.endsWith(":lock"));
    }
}
