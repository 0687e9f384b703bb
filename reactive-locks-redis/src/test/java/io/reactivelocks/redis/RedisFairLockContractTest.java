package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.LockClock;
import io.reactivelocks.test.FairLockContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The fair lock contract against a real redis-server, plus the Redis specifics (keys, bad input). */
class RedisFairLockContractTest extends FairLockContract {

    private static RedisTestSupport redis;
    private final List<RedisLockBackend> abandoned = new ArrayList<>();

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

    @AfterEach
    void closeAbandoned() {
        abandoned.forEach(b -> b.close().block(STEP));
        abandoned.clear();
    }

    private final List<LockStore> sessions = new ArrayList<>();

    /** @return a new session (its own connections), closed after the test */
    private LockStore session() {
        LockStore s = RedisLocks.connect(redis.client, redis.options());
        sessions.add(s);
        return s;
    }

    @AfterEach
    void closeSessions() {
        sessions.forEach(s -> s.close().block(STEP));
        sessions.clear();
    }

    @Override
    protected LockClient newClient() {
        return session().fairLocks(options());
    }

    @Override
    protected int waiting(String name) {
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            return c.sync().zcard(new RedisKeys(redis.prefix).fairQueue(name)).intValue();
        }
    }

    /** One script call that queues the owner, whose turn is never subscribed: the entry is never refreshed. */
    @Override
    protected void enqueueAbandonedWaiter(String name) {
        RedisLockBackend b = redis.backend();
        abandoned.add(b);
        Attempt a = new RedisFairLockBackend(b, false).tryGrant(new GrantRequest(name, GrantRequest.newOwner(),
                options().leaseTime(), true, LockClock.system())).block(STEP);
        assertThat(a).isInstanceOf(Attempt.Queued.class);
    }

    @Override
    protected void assertNothingLeft(String name) {
        RedisKeys keys = new RedisKeys(redis.prefix);
        assertThat(redis.scanKeys()).as("keys of '%s' left", name)
                .doesNotContain(keys.lock(name), keys.fairQueue(name), keys.fairDeadlines(name));
    }

    @Test
    void aWaitersEntryExpiresByTwiceTheLeaseTimeOnTheServer() {
        String name = name("deadline");
        LockClient c = newClient();
        try {
            var holder = c.acquire(name, options()).block(STEP);
            enqueueAbandonedWaiter(name);
            try (StatefulRedisConnection<String, String> conn = redis.connect()) {
                RedisKeys keys = new RedisKeys(redis.prefix);
                assertThat(conn.sync().zcard(keys.fairDeadlines(name))).isEqualTo(1L);
                long pttl = conn.sync().pttl(keys.fairQueue(name));
                assertThat(pttl).as("queue key TTL").isPositive()
                        .isLessThanOrEqualTo(RedisFairLockBackend.waiterDeadline(options().leaseTime()).toMillis());
            }
            holder.release().block(STEP);
        } finally {
            c.close().block(STEP);
        }
    }

    @Test
    void badInputFailsAtCallTime() {
        org.assertj.core.api.Assertions.assertThatNullPointerException()
                .isThrownBy(() -> RedisLocks.connect((io.lettuce.core.RedisClient) null)).withMessageContaining("client");
        org.assertj.core.api.Assertions.assertThatNullPointerException()
                .isThrownBy(() -> session().fairLocks(null))
                .withMessageContaining("options");
        org.assertj.core.api.Assertions.assertThatNullPointerException()
                .isThrownBy(() -> RedisLocks.connect((RedisLockBackend) null)).withMessageContaining("backend");
        assertThat(RedisFairLockBackend.waiterDeadline(Duration.ofMillis(100))).isEqualTo(Duration.ofSeconds(1));
    }
}
