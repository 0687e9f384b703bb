package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/** What is specific to the Redis task store: key layout, scripts, pub/sub wake-ups, TIME-floored tokens. */
class RedisTaskStoreTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static RedisTestSupport redis;
    private final List<LockStore> sessions = new ArrayList<>();
    private final List<Disposable> subscriptions = new ArrayList<>();

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
    void close() {
        subscriptions.forEach(Disposable::dispose);
        sessions.forEach(q -> q.close().block(STEP));
    }

    private TaskQueue queue() {
        return queue(LockOptions.defaults());
    }

    /** A task queue on a session of its own (over a new backend), closed after the test. */
    private TaskQueue queue(LockOptions options) {
        LockStore session = RedisLocks.connect(redis.backend());
        sessions.add(session);
        return session.taskQueue(options);
    }

    private static RedisKeys keys() {
        return new RedisKeys(redis.prefix);
    }

    private static long zcard(String key) {
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            return c.sync().zcard(key);
        }
    }

    @Test
    void aQueueKeepsItsKeysUnderOneHashTagAndMovesTasksBetweenPendingAndClaimed() {
        TaskQueue tasks = queue();
        String q = "layout-{x}*?" + UUID.randomUUID();
        tasks.registerAll(q, List.of("a", "b", "c"), 0).block(STEP);
        tasks.register(q, "d", 0, "with payload").block(STEP);
        assertThat(zcard(keys().pending(q))).isEqualTo(4);
        TaskClaim a = tasks.tryCapture(q, 1).blockFirst(STEP);
        assertThat(zcard(keys().pending(q))).isEqualTo(3);
        assertThat(zcard(keys().claimed(q))).isEqualTo(1);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            assertThat(c.sync().hget(keys().tasks(q), RedisKeys.tag("a"))).startsWith("c|0|0|1|" + a.token() + "|" + a.owner());
            assertThat(c.sync().hget(keys().payloads(q), RedisKeys.tag("d"))).isEqualTo(RedisKeys.tag("with payload"));
        }
        String tag = keys().tasks(q).substring(redis.prefix.length(), keys().tasks(q).indexOf("}:") + 1);
        assertThat(tag).startsWith("{").endsWith("}").doesNotContain("*", "?", "x}");
        for (String key : List.of(keys().pending(q), keys().claimed(q), keys().payloads(q), keys().queueFence(q),
                keys().queueChannel(q))) {
            assertThat(key).startsWith(redis.prefix + tag + ":queue:");
        }
        for (String id : List.of("a", "b", "c", "d")) {
            tasks.remove(q, id).block(STEP);
        }
        assertThat(redis.scanKeys()).filteredOn(k -> k.startsWith(redis.prefix + tag))
                .containsExactly(keys().queueFence(q));
    }

    @Test
    void tokensAreFlooredByTheServersClockSoARestartWithoutTheCounterCannotLowerThem() {
        TaskQueue tasks = queue();
        String q = "time-" + UUID.randomUUID();
        tasks.register(q, "t", 0).block(STEP);
        long before = System.currentTimeMillis() * 1000 - 60_000_000L; // server TIME in µs, a minute of slack
        TaskClaim first = tasks.tryCapture(q, 1).blockFirst(STEP);
        assertThat(first.token()).isGreaterThan(before);
        tasks.release(first).block(STEP);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            c.sync().del(keys().queueFence(q)); // as if the counter was lost
        }
        TaskClaim second = tasks.tryCapture(q, 1).blockFirst(STEP);
        assertThat(second.token()).isGreaterThan(first.token());
        tasks.remove(q, "t").block(STEP);
    }

    @Test
    void aWaitingCaptureListensOnTheQueuesChannelAndIsWokenByAPublishedReady() {
        TaskQueue capturer = queue(LockOptions.builder()
                .backoff(reactor.util.retry.Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10))
                        .maxBackoff(Duration.ofMinutes(10)).jitter(0)).build());
        String q = "wake-" + UUID.randomUUID();
        List<TaskClaim> got = new CopyOnWriteArrayList<>();
        subscriptions.add(capturer.capture(q).subscribe(got::add));
        String channel = keys().queueChannel(q);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 1L);
        }
        queue().register(q, "late", 0).block(STEP);
        await().atMost(Duration.ofSeconds(3)).until(() -> got.size() == 1);
        subscriptions.forEach(Disposable::dispose);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 0L);
        }
        queue().remove(q, "late").block(STEP);
    }
}
