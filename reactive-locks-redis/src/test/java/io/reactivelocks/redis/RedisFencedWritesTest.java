package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.StaleTokenException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** {@link RedisFencedWrites} on a real redis-server: the application's hash keeps the highest token it accepted. */
class RedisFencedWritesTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static RedisTestSupport redis;
    private static StatefulRedisConnection<String, String> connection;
    private static LockStore session;

    @BeforeAll
    static void start() {
        redis = RedisTestSupport.start();
        connection = redis.connect();
        session = RedisLocks.connect(redis.client, redis.options());
    }

    @AfterAll
    static void stop() {
        if (session != null) {
            session.close().block(STEP);
        }
        if (connection != null) {
            connection.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private static Map<String, String> hash(String key) {
        return connection.sync().hgetall(key);
    }

    @Test
    void aLowerTokenIsRefusedWithTheKeysFenceAndChangesNothing() {
        RedisFencedWrites writes = RedisFencedWrites.of(connection);
        String key = redis.prefix + "app:config";
        StepVerifier.create(writes.write(key, "value", "v5", 5)).as("a new key admits any token").expectComplete().verify(STEP);
        StepVerifier.create(writes.write(key, "value", "v3", 3))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class, s -> {
                    assertThat(s.resource()).isEqualTo(key);
                    assertThat(s.token()).isEqualTo(3);
                    assertThat(s.fence()).hasValue(5);
                }))
                .verify(STEP);
        assertThat(hash(key)).containsExactlyInAnyOrderEntriesOf(Map.of("value", "v5", "fence", "5"));
        StepVerifier.create(writes.write(key, "value", "v5b", 5)).as("equal: the same grant again").expectComplete().verify(STEP);
        Map<String, String> two = new LinkedHashMap<>();
        two.put("value", "v" + Long.MAX_VALUE);
        two.put("note", "{braces} and * ? [globs] are data");
        StepVerifier.create(writes.write(key, two, Long.MAX_VALUE)).expectComplete().verify(STEP);
        StepVerifier.create(writes.write(key, "value", "below max", Long.MAX_VALUE - 1)).as("exact near 2^63")
                .expectError(StaleTokenException.class).verify(STEP);
        assertThat(hash(key)).containsEntry("value", "v" + Long.MAX_VALUE).containsEntry("fence", Long.toString(Long.MAX_VALUE))
                .containsEntry("note", "{braces} and * ? [globs] are data");

        String other = redis.prefix + "app:other";
        RedisFencedWrites versioned = writes.fenceField("version");
        StepVerifier.create(versioned.write(other, "value", "a", -7)).expectComplete().verify(STEP);
        StepVerifier.create(versioned.write(other, "value", "b", -8)).expectError(StaleTokenException.class).verify(STEP);
        assertThat(hash(other)).containsExactlyInAnyOrderEntriesOf(Map.of("value", "a", "version", "-7"));
        connection.sync().hset(other, "version", "not a token");
        StepVerifier.create(versioned.write(other, "value", "c", 1)).expectError(RedisCommandExecutionException.class).verify(STEP);

        assertThatThrownBy(() -> writes.write(key, "fence", "x", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence");
        assertThatThrownBy(() -> writes.write("", "value", "x", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("key");
        assertThatThrownBy(() -> writes.write(key, Map.of(), 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fields");
        assertThatThrownBy(() -> writes.write(key, "value", null, 1)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("value");
        assertThatThrownBy(() -> writes.fenceField("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPausedHoldersLateWriteIsRefused() {
        LockClient locks = session.locks(LockOptions.defaults());
        RedisFencedWrites writes = RedisFencedWrites.of(connection);
        String name = "cart:42";
        String key = redis.prefix + "app:cart:42";
        Lease a = locks.acquire(name).block(STEP);
        // A pauses (a GC pause, say) past its lease: the operator takes the lock away, A does not notice in time
        session.admin().forceRelease(name).block(STEP);
        Lease b = locks.acquire(name).block(STEP);
        assertThat(b.token()).isGreaterThan(a.token());
        StepVerifier.create(writes.write(key, "items", "B", b.token())).expectComplete().verify(STEP);
        // A wakes up and writes with its old token
        StepVerifier.create(writes.write(key, "items", "A", a.token()))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class, s -> {
                    assertThat(s.token()).isEqualTo(a.token());
                    assertThat(s.fence()).hasValue(b.token());
                }))
                .verify(STEP);
        assertThat(hash(key)).containsEntry("items", "B").containsEntry("fence", Long.toString(b.token()));
        StepVerifier.create(writes.write(key, "items", "B2", b.token())).as("B again, same token").expectComplete().verify(STEP);
        b.release().block(STEP);
        Lease c = locks.acquire(name).block(STEP);
        StepVerifier.create(writes.write(key, "items", "C", c.token())).as("a fresh, higher token").expectComplete().verify(STEP);
        assertThat(hash(key)).containsEntry("items", "C").containsEntry("fence", Long.toString(c.token()));
        c.release().block(STEP);
    }

    @Test
    void concurrentWritersWithMixedTokensEndWithTheHighest() {
        StatefulRedisConnection<String, String> second = redis.connect();
        List<RedisFencedWrites> writers = List.of(RedisFencedWrites.of(connection), RedisFencedWrites.of(second));
        String key = redis.prefix + "app:counter";
        List<Long> tokens = new ArrayList<>();
        for (long t = 1; t <= 20; t++) {
            tokens.add(t);
            tokens.add(t);      // two writers per token: the same grant twice
        }
        Collections.shuffle(tokens);
        Flux.fromIterable(tokens).index()
                .flatMap(it -> Mono.just(it.getT2()).flatMap(t -> writers.get((int) (it.getT1() % 2)).write(key, "value", Long.toString(t), t)
                        .onErrorResume(StaleTokenException.class, e -> e.fence().getAsLong() > t ? Mono.empty() : Mono.error(e))),
                        tokens.size())
                .then()
                .block(STEP);
        second.close();
        assertThat(hash(key)).containsExactlyInAnyOrderEntriesOf(Map.of("value", "20", "fence", "20"));
    }
}
