package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockStore;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The semaphore contract against a real redis-server, plus the Redis specifics: keys, server-time tokens, expiry. */
class RedisSemaphoreContractTest extends SemaphoreContract {

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
    protected SemaphoreStore newStore() {
        return new RedisSemaphoreStore(redis.backend(), true);
    }

    @Test
    void holdersAreASortedSetByServerExpiryAndTheKeysGoWithTheLastHolder() {
        LockStore sStore = RedisLocks.connect(redis.client, redis.options());
        Semaphore s = sStore.semaphores(options());
        String name = name("keys");
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            Lease a = s.acquire(name, 2).block(STEP);
            Lease b = s.acquire(name, 2).block(STEP);
            RedisKeys keys = new RedisKeys(redis.prefix);
            List<String> t = c.sync().time();
            long serverMicros = Long.parseLong(t.get(0)) * 1_000_000 + Long.parseLong(t.get(1));
            assertThat(a.token()).as("floored by the server's TIME in µs").isGreaterThan(serverMicros - 10_000_000);
            assertThat(c.sync().zrange(keys.semaphore(name), 0, -1)).containsExactlyInAnyOrder(a.owner(), b.owner());
            assertThat(c.sync().hget(keys.semaphoreTokens(name), b.owner())).isEqualTo(Long.toString(b.token()));
            assertThat(c.sync().pttl(keys.semaphore(name))).as("the set expires with its last holder")
                    .isPositive().isLessThanOrEqualTo(options().leaseTime().toMillis());
            a.release().block(STEP);
            b.release().block(STEP);
            assertThat(c.sync().exists(keys.semaphore(name), keys.semaphoreTokens(name))).isZero();
            // the fencing counter's key, as RedisKeys lays it out: {prefix}{<tag>}:semaphore:fence
            assertThat(c.sync().pttl(keys.semaphore(name) + ":fence")).as("the counter has the fence TTL").isPositive();
        } finally {
            sStore.close().block(STEP);
        }
    }

    @Test
    void anUncontendedAcquireAndReleaseRunFewCommands() {
        // 2 script calls: acquire = TIME, ZSCORE, ZCARD, GET, ZADD, HSET, PUBLISH, SET, 2 PEXPIRE; release = ZREM, HDEL,
        // PUBLISH (19 before expired holders were dropped only when in the way and the release stopped deleting twice)
        LockStore sStore = RedisLocks.connect(redis.client, redis.options());
        Semaphore s = sStore.semaphores(io.reactivelocks.LockOptions.defaults());
        String name = name("cost");
        int pairs = 20;
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            s.acquire(name, 1).flatMap(Lease::release).block(STEP); // scripts loaded, connection up
            long before = commandCalls(c);
            for (int i = 0; i < pairs; i++) {
                s.acquire(name, 1).flatMap(Lease::release).block(STEP);
            }
            long commands = commandCalls(c) - before - 1; // less the first INFO
            assertThat(commands / (double) pairs).as("Redis commands per acquire + release").isLessThanOrEqualTo(15.0);
            assertThat(c.sync().exists(new RedisKeys(redis.prefix).semaphore(name))).isZero();
        } finally {
            sStore.close().block(STEP);
        }
    }

    /** @return the server's count of commands run so far (scripts' inner commands included) */
    private static long commandCalls(StatefulRedisConnection<String, String> c) {
        long total = 0;
        for (String line : c.sync().info("commandstats").split("\r?\n")) {
            int at = line.indexOf("calls=");
            if (line.startsWith("cmdstat_") && at > 0) {
                total += Long.parseLong(line.substring(at + 6, line.indexOf(',', at)));
            }
        }
        return total;
    }
}
