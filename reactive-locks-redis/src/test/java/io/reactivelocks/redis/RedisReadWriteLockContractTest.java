package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.test.ReadWriteLockContract;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/** The read-write lock contract against a real redis-server, plus the Redis specifics: keys, server-time tokens, intents. */
class RedisReadWriteLockContractTest extends ReadWriteLockContract {

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
    protected ReadWriteStore newStore() {
        return new RedisReadWriteStore(redis.backend(), true);
    }

    @Test
    void grantsAndIntentsAreSortedSetsByServerExpiryAndTheKeysGoWithTheLastHolder() {
        LockStore rwStore = RedisLocks.connect(redis.client, redis.options());
        ReadWriteLock rw = rwStore.readWriteLocks(ReadWriteLockOptions.of(options()));
        String name = name("keys");
        RedisKeys keys = new RedisKeys(redis.prefix);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            Lease r = rw.read().acquire(name).block(STEP);
            List<String> t = c.sync().time();
            long serverMicros = Long.parseLong(t.get(0)) * 1_000_000 + Long.parseLong(t.get(1));
            assertThat(r.token()).as("floored by the server's TIME in µs").isGreaterThan(serverMicros - 10_000_000);
            assertThat(c.sync().zrange(keys.readWrite(name), 0, -1)).containsExactly(r.owner());
            assertThat(c.sync().hget(keys.readWriteTokens(name), r.owner())).isEqualTo(Long.toString(r.token()));
            assertThat(c.sync().hget(keys.readWriteTokens(name), "\0w")).as("no writer field while a reader holds").isNull();
            assertThat(c.sync().pttl(keys.readWrite(name))).as("the set expires with its last holder")
                    .isPositive().isLessThanOrEqualTo(options().leaseTime().toMillis());
            AtomicReference<Lease> w = new AtomicReference<>();
            Disposable writer = rw.write().acquire(name).subscribe(w::set);
            await().atMost(STEP).until(() -> c.sync().zcard(keys.readWriteIntents(name)) == 1);
            assertThat(c.sync().pttl(keys.readWriteIntents(name))).as("an intent expires by itself")
                    .isPositive().isLessThanOrEqualTo(options().leaseTime().toMillis());
            r.release().block(STEP);
            await().atMost(STEP).until(() -> w.get() != null);
            assertThat(c.sync().exists(keys.readWriteIntents(name))).as("the intent went with the grant").isZero();
            assertThat(c.sync().hget(keys.readWriteTokens(name), "\0w")).as("the writer field names the writer")
                    .isEqualTo(w.get().owner());
            assertThat(c.sync().pttl(keys.readWriteTokens(name))).as("the tokens expire with the grant")
                    .isPositive().isLessThanOrEqualTo(options().leaseTime().toMillis());
            w.get().release().block(STEP);
            writer.dispose();
            assertThat(c.sync().exists(keys.readWrite(name), keys.readWriteTokens(name))).isZero();
            assertThat(c.sync().pttl(keys.readWriteFence(name))).as("the counter has the fence TTL").isPositive();
        } finally {
            rwStore.close().block(STEP);
        }
    }
}
