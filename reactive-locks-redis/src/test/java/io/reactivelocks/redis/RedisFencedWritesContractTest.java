package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.test.FencedWritesContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The fenced-writes contract against a real redis-server, plus the Redis specifics: the hash layout and exact long comparison. */
class RedisFencedWritesContractTest extends FencedWritesContract {

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

    /** Each resource on a session of its own. */
    @Override
    protected FencedValues newValues() {
        return session().fencedValues();
    }

    @Test
    void tokensAreComparedExactlyOverTheWholeLongRange() {
        FencedValues v = values();
        String k = key("long");
        assertThat(v.write(k, Long.MAX_VALUE - 1, "a").block(STEP)).isTrue();
        assertThat(v.write(k, Long.MAX_VALUE - 2, "b").block(STEP)).as("differs beyond 2^53").isFalse();
        assertThat(v.write(k, Long.MAX_VALUE, "c").block(STEP)).isTrue();
        String n = key("negative");
        assertThat(v.write(n, -10, "a").block(STEP)).isTrue();
        assertThat(v.write(n, -11, "b").block(STEP)).isFalse();
        assertThat(v.write(n, -9, "c").block(STEP)).isTrue();
        assertThat(v.write(n, 0, "d").block(STEP)).isTrue();
        assertThat(v.write(n, -1, "e").block(STEP)).isFalse();
        assertThat(v.read(n).block(STEP)).isEqualTo(new FencedValue("d", 0));
    }

    @Test
    void theFenceLivesBesideTheValueInOneHash() {
        FencedValues v = values();
        String k = key("layout");
        assertThat(v.write(k, 7, "x").block(STEP)).isTrue();
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            String hash = new RedisKeys(redis.prefix).fencedValue(k);
            assertThat(c.sync().hgetall(hash)).containsEntry("value", "x").containsEntry("fence", "7");
            assertThat(c.sync().pttl(hash)).as("application data has no TTL").isEqualTo(-1);
        }
    }
}
