package io.reactivelocks.redis;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.UnconfirmedReleaseContract;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The unconfirmed-release contract against a real redis-server of its own, frozen with SIGSTOP.
 * The release's script waits in the connection while the server is frozen and runs when it goes
 * on; were it lost, the lock key's TTL (the lease) would remove it. The name's fencing counter
 * is kept by design (tokens keep increasing), so only the lock key is looked at.
 */
class RedisUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    private static RedisTestSupport redis;

    @BeforeAll
    static void startServer() {
        redis = RedisTestSupport.start(); // its own: this class pauses it
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
    protected void pauseServer() {
        redis.server.pause();
    }

    @Override
    protected void resumeServer() {
        redis.server.resume();
    }

    @Override
    protected List<String> storedFor(String name) {
        String key = new RedisKeys(redis.prefix).lock(name);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            String value = c.sync().get(key);
            return value == null ? List.of() : List.of(key + " = " + value + " (pttl " + c.sync().pttl(key) + " ms)");
        }
    }
}
