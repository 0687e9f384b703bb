package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisURI;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.test.fault.FaultProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.util.retry.Retry;

/**
 * A holder whose server freezes or whose connection breaks: its hold stream must end before any
 * other client (with its own connection) is granted the lock — or, when the connection merely
 * reconnects in time, the lease must survive.
 */
class RedisFaultTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(Duration.ofMillis(1500)).requestTimeout(Duration.ofMillis(500)).build();

    private RedisTestSupport redis;
    private FaultProxy proxy;
    private LockClient a;
    private LockClient b;

    @BeforeEach
    void start() {
        redis = RedisTestSupport.start();
        proxy = FaultProxy.start(redis.server.host(), redis.server.port());
        // a talks through the proxy, b directly
        a = LockClient.create(RedisLockBackend.create(redis.client, redis.options().mutate()
                .uri(RedisURI.create("redis://" + proxy.host() + ":" + proxy.port())).build()), OPTIONS);
        b = LockClient.create(redis.backend(), OPTIONS);
    }

    @AfterEach
    void stop() {
        try {
            redis.server.resume();
            proxy.heal();
            a.close().onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(STEP);
            b.close().block(STEP);
        } finally {
            proxy.close();
            redis.close();
        }
    }

    private static String name(String p) {
        return p + "-" + UUID.randomUUID();
    }

    @Test
    void aServerFrozenLongerThanTheLeaseEndsTheHoldBeforeAnotherClientIsGranted() {
        String name = name("sigstop");
        List<Lease> updates = new CopyOnWriteArrayList<>();
        AtomicLong ended = new AtomicLong();
        Disposable hold = a.hold(name).subscribe(updates::add, e -> ended.set(-1), () -> ended.set(System.nanoTime()));
        try {
            await().atMost(STEP).until(() -> updates.size() >= 2);
            redis.server.pause();
            await().atMost(STEP).until(() -> ended.get() != 0);
            assertThat(ended.get()).as("the hold stream completed, not errored").isPositive();
            redis.server.resume();
            Lease second = b.acquire(name).block(STEP);
            long granted = System.nanoTime();
            assertThat(ended.get()).isLessThan(granted);
            assertThat(second.token()).isGreaterThan(updates.get(0).token());
            second.release().block(STEP);
        } finally {
            hold.dispose();
        }
    }

    @Test
    void aBlackholedConnectionEndsTheHoldBeforeAnotherClientIsGranted() {
        String name = name("blackhole");
        List<Lease> updates = new CopyOnWriteArrayList<>();
        AtomicLong ended = new AtomicLong();
        Disposable hold = a.hold(name).subscribe(updates::add, e -> ended.set(-1), () -> ended.set(System.nanoTime()));
        try {
            await().atMost(STEP).until(() -> updates.size() >= 2);
            proxy.blackhole();
            Lease second = b.acquire(name).block(STEP); // granted once the server expired a's key
            long granted = System.nanoTime();
            assertThat(ended.get()).as("a's hold completed before b was granted").isPositive().isLessThan(granted);
            assertThat(second.token()).isGreaterThan(updates.get(0).token());
            second.release().block(STEP);
        } finally {
            hold.dispose();
        }
    }

    @Test
    void aConnectionCutMidHoldReconnectsAndTheLeaseSurvives() {
        String name = name("cut");
        List<Lease> updates = new CopyOnWriteArrayList<>();
        AtomicLong ended = new AtomicLong();
        Disposable hold = a.hold(name).subscribe(updates::add, e -> ended.set(-1), () -> ended.set(System.nanoTime()));
        try {
            await().atMost(STEP).until(() -> updates.size() >= 2);
            assertThat(proxy.cutConnections()).as("connections cut").isPositive();
            int seen = updates.size();
            // Lettuce reconnects (100 ms delay in tests) and the next renewals go through
            await().atMost(STEP).until(() -> updates.size() >= seen + 3);
            assertThat(ended.get()).as("still held").isZero();
            assertThat(updates).extracting(Lease::token).containsOnly(updates.get(0).token());
            assertThat(b.tryAcquire(name).blockOptional(STEP)).isEmpty();
        } finally {
            hold.dispose();
        }
        await().atMost(STEP).until(() -> redis.inspect(name).isEmpty());
    }

    @Test
    void aWaiterWhosePubSubConnectionWasCutReChecksOnceItIsResubscribed() {
        // a 10-minute backoff and 60 s leases: only a re-check after the resubscription can wake the waiter in time
        LockOptions slow = LockOptions.builder()
                .leaseTime(Duration.ofSeconds(60))
                .waitTimeout(null) // waits as long as the reconnect takes: Lettuce's reconnect delay grows while refused
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        // only the waiter's pub/sub connection goes through the proxy: its commands reach the server directly, so
        // the re-check after the resubscription cannot itself fail on a command connection still reconnecting
        // (a failed attempt waits the 10-minute backoff)
        StatefulRedisConnection<String, String> commands = redis.client.connect(io.lettuce.core.codec.StringCodec.UTF8);
        io.lettuce.core.pubsub.StatefulRedisPubSubConnection<String, String> pubSub = redis.client.connectPubSub(
                io.lettuce.core.codec.StringCodec.UTF8, RedisURI.create("redis://" + proxy.host() + ":" + proxy.port()));
        RedisLockBackend viaProxy = RedisLockBackend.create(commands, pubSub, redis.options());
        LockClient waiter = LockClient.create(viaProxy, slow);
        LockClient holder = LockClient.create(redis.backend(), slow);
        String name = name("resubscribe");
        String channel = new RedisKeys(redis.prefix).channel(name);
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable watch = viaProxy.events(name).subscribe(events::add);
        Disposable waiting = null;
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            Lease held = holder.acquire(name).block(STEP);
            waiting = waiter.acquire(name).subscribe(got::set);
            await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 1L);
            await().atMost(STEP).until(() -> subscribedCount(events) >= 1);
            long subscribedBefore = subscribedCount(events);

            // cut the waiter's pub/sub connection and keep it down while the lock is released: the release message is lost
            proxy.refuse();
            assertThat(proxy.cutConnections()).isPositive();
            await().atMost(STEP).until(() -> c.sync().pubsubNumsub(channel).get(channel) == 0L);
            held.release().block(STEP);
            assertThat(got.get()).isNull();

            long healed = System.nanoTime();
            proxy.heal(); // Lettuce reconnects and subscribes again by itself
            // Lettuce's reconnect delay (doubling while refused) bounds this, not the 10-minute backoff
            await().atMost(Duration.ofSeconds(60)).until(() -> got.get() != null);
            assertThat(Duration.ofNanos(System.nanoTime() - healed)).as("woken by the re-check, not by the backoff")
                    .isLessThan(Duration.ofMinutes(2));
            assertThat(got.get().token()).isGreaterThan(held.token());
            assertThat(subscribedCount(events)).as("Subscribed again after the reconnect").isGreaterThan(subscribedBefore);
            assertThat(events).as("the release message was lost").noneMatch(e -> e instanceof LockEvent.Released r
                    && held.owner().equals(r.owner()));
            got.get().release().block(STEP);
        } finally {
            watch.dispose();
            if (waiting != null) {
                waiting.dispose();
            }
            waiter.close().onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(STEP);
            holder.close().block(STEP);
            pubSub.close();
            commands.close();
        }
    }

    private static long subscribedCount(List<LockEvent> events) {
        return events.stream().filter(e -> e instanceof LockEvent.Subscribed).count();
    }
}
