package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/** A redis-server without persistence that is killed and restarted empty. */
class RedisRestartTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private RedisTestSupport redis;

    @BeforeEach
    void start() {
        redis = RedisTestSupport.start();
    }

    @AfterEach
    void stop() {
        redis.close();
    }

    private static GrantRequest request(String name, String owner) {
        return new GrantRequest(name, owner, Duration.ofSeconds(30), true, LockClock.system());
    }

    /** Retries over the reconnect: the same backend, Lettuce reconnects by itself. */
    private static Attempt.Granted grantEventually(RedisLockBackend b, String name, String owner) {
        AtomicReference<Attempt> got = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> {
                    got.set(b.tryGrant(request(name, owner)).block(Duration.ofSeconds(2)));
                    return got.get() != null;
                });
        return (Attempt.Granted) got.get();
    }

    @Test
    void tokensStayMonotonicAfterARestartThatLostTheCounters() {
        RedisLockBackend b = redis.backend();
        try {
            String name = "restart-" + UUID.randomUUID();
            String first = GrantRequest.newOwner();
            Attempt.Granted before = (Attempt.Granted) b.tryGrant(request(name, first)).block(STEP);
            assertThat(b.release(name, first).block(STEP)).isTrue();
            String second = GrantRequest.newOwner();
            Attempt.Granted alsoBefore = (Attempt.Granted) b.tryGrant(request(name, second)).block(STEP);
            assertThat(alsoBefore.token()).isGreaterThan(before.token());
            // the lock stays held: the restart loses it together with the counter

            redis.server.kill();
            redis.server.restart();
            assertThat(redis.scanKeys()).as("nothing survives the restart").isEmpty();

            String third = GrantRequest.newOwner();
            Attempt.Granted after = grantEventually(b, name, third);
            assertThat(after.token()).as("token after the restart").isGreaterThan(alsoBefore.token());
            assertThat(b.release(name, third).block(STEP)).isTrue();
        } finally {
            b.close().block(STEP);
        }
    }

    @Test
    void aHoldStreamCompletesWhenARestartLostTheLockAndANewGrantHasAHigherToken() {
        LockOptions options = LockOptions.builder().leaseTime(Duration.ofSeconds(3)).requestTimeout(Duration.ofSeconds(1)).build();
        LockClient a = LockClient.create(redis.backend(), options);
        LockClient b = LockClient.create(redis.backend(), options);
        try {
            String name = "restart-hold-" + UUID.randomUUID();
            AtomicReference<Lease> first = new AtomicReference<>();
            AtomicBoolean completed = new AtomicBoolean();
            Disposable hold = a.hold(name).subscribe(l -> first.compareAndSet(null, l), e -> { }, () -> completed.set(true));
            await().atMost(STEP).until(() -> first.get() != null);

            redis.server.kill();
            redis.server.restart();

            // the next renewal finds the key gone (or the deadline passes while reconnecting)
            await().atMost(Duration.ofSeconds(20)).untilTrue(completed);
            assertThat(first.get().isValid()).isFalse();
            Lease second = b.acquire(name).block(Duration.ofSeconds(30));
            assertThat(second.token()).isGreaterThan(first.get().token());
            second.release().block(STEP);
            hold.dispose();
        } finally {
            a.close().block(STEP);
            b.close().block(STEP);
        }
    }
}
