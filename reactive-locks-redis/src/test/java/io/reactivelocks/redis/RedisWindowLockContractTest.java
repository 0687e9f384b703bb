package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.LockStore;
import io.reactivelocks.spi.window.WindowStore;
import io.reactivelocks.test.WindowLockContract;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The window-lock contract against a real redis-server, plus what is specific to Redis: keys and their expiry. */
class RedisWindowLockContractTest extends WindowLockContract {

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
    protected WindowStore newStore() {
        return new RedisWindowStore(redis.backend(), true);
    }

    @Test
    void theWindowIsTheServersAndTheKeysExpireWithTheirWindow() {
        LockStore wStore = RedisLocks.connect(redis.client, redis.options());
        WindowLock w = wStore.windowLocks(options());
        String name = name("keys");
        Duration hour = Duration.ofHours(1);
        WindowClaim claim = w.tryClaim(name, hour).block(STEP);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            List<String> t = c.sync().time();
            long serverMillis = Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
            assertThat(claim.window()).isEqualTo(serverMillis / hour.toMillis());
            assertThat(claim.token()).as("floored by the server's TIME in µs").isGreaterThanOrEqualTo((serverMillis - 10_000) * 1000);
            RedisKeys keys = new RedisKeys(redis.prefix);
            long pttl = c.sync().pttl(keys.window(name));
            assertThat(pttl).as("the window key expires with its window").isLessThanOrEqualTo(hour.toMillis())
                    .isGreaterThanOrEqualTo(claim.remaining(w.options().clock()).toMillis() - 100);
            assertThat(c.sync().pttl(keys.windowFence(name))).as("the counter has the fence TTL").isPositive();
        } finally {
            wStore.close().block(STEP);
        }
    }
}
