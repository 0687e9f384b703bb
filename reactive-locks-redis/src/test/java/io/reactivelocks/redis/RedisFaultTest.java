package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisURI;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.test.fault.FaultProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

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
}
