package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** {@link RedisWindowLock} against a real redis-server. */
class RedisWindowLockTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final Duration HOUR = Duration.ofHours(1);

    private static RedisTestSupport redis;
    private final List<RedisLockBackend> backends = new ArrayList<>();

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
    void closeBackends() {
        backends.forEach(b -> b.close().block(STEP));
        assertThat(redis.scanKeys()).noneMatch(k -> k.endsWith(":lock"));
    }

    private RedisWindowLock windowLock() {
        RedisLockBackend b = redis.backend();
        backends.add(b);
        return RedisWindowLock.create(b);
    }

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    @Test
    void theFirstClaimOfAWindowWinsAndLaterOnesAreEmpty() {
        RedisWindowLock w = windowLock();
        String name = name("hourly");
        WindowClaim claim = w.tryClaim(name, HOUR).block(STEP);
        assertThat(claim).isNotNull();
        assertThat(claim.name()).isEqualTo(name);
        assertThat(claim.period()).isEqualTo(HOUR);
        assertThat(claim.remaining()).isPositive().isLessThanOrEqualTo(HOUR);
        try (StatefulRedisConnection<String, String> c = redis.connect()) {
            List<String> t = c.sync().time();
            long serverMillis = Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
            assertThat(claim.window()).isEqualTo(serverMillis / HOUR.toMillis());
            long pttl = c.sync().pttl(new RedisKeys(redis.prefix).window(name));
            assertThat(pttl).as("the key expires with its window").isPositive().isLessThanOrEqualTo(claim.remaining().toMillis());
        }
        StepVerifier.create(w.tryClaim(name, HOUR)).expectComplete().verify(STEP);
        StepVerifier.create(windowLock().tryClaim(name, HOUR)).as("another client").expectComplete().verify(STEP);
    }

    @Test
    void periodsAndNamesAreIndependent() {
        RedisWindowLock w = windowLock();
        String name = name("independent");
        assertThat(w.tryClaim(name, HOUR).block(STEP)).isNotNull();
        assertThat(w.tryClaim(name, Duration.ofDays(1)).block(STEP)).as("same name, other period").isNotNull();
        assertThat(w.tryClaim(name + "x", HOUR).block(STEP)).as("other name").isNotNull();
        assertThat(w.tryClaim("{" + name + "}", HOUR).block(STEP)).as("braces").isNotNull();
        StepVerifier.create(w.tryClaim(name, Duration.ofDays(1))).expectComplete().verify(STEP);
    }

    @Test
    void theNextWindowIsClaimableAgainWithAHigherWindowNumber() {
        RedisWindowLock w = windowLock();
        String name = name("short");
        Duration period = Duration.ofMillis(300);
        WindowClaim first = w.tryClaim(name, period).block(STEP);
        assertThat(first).isNotNull();
        AtomicReference<WindowClaim> next = new AtomicReference<>();
        await().atMost(STEP).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    next.set(w.tryClaim(name, period).block(STEP));
                    return next.get() != null;
                });
        assertThat(next.get().window()).isGreaterThan(first.window());
    }

    @Test
    void manyConcurrentClaimersOfOneWindowHaveExactlyOneWinner() {
        List<RedisWindowLock> locks = List.of(windowLock(), windowLock(), windowLock(), windowLock());
        String name = name("race");
        List<WindowClaim> won = Flux.range(0, 40)
                .flatMap(i -> locks.get(i % locks.size()).tryClaim(name, Duration.ofDays(1)).subscribeOn(Schedulers.parallel()))
                .collectList()
                .block(STEP);
        assertThat(won).hasSize(1);
    }

    @Test
    void argumentsAreCheckedAtCallTime() {
        RedisWindowLock w = windowLock();
        assertThatThrownBy(() -> w.tryClaim(null, HOUR)).isInstanceOf(NullPointerException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> w.tryClaim("", HOUR)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> w.tryClaim("é".repeat(513), HOUR)).hasMessageContaining("name").hasMessageContaining("1024");
        assertThatThrownBy(() -> w.tryClaim("a", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("period");
        assertThatThrownBy(() -> w.tryClaim("a", Duration.ofNanos(10))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("period");
        assertThatThrownBy(() -> RedisWindowLock.create(null)).hasMessageContaining("backend");
    }
}
