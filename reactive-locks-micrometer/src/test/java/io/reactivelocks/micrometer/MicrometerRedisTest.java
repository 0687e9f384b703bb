package io.reactivelocks.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.redis.RedisLockBackend;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The listener over a real redis-server: meters carry {@code backend=redis}. */
class MicrometerRedisTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void aRealRedisClientRecordsUnderTheRedisBackendTag() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (RedisServer server = RedisServer.start()) {
            RedisURI uri = RedisURI.create(server.url());
            RedisClient redis = RedisClient.create(uri);
            try {
                RedisLockBackend backend = RedisLocks.backend(redis, RedisLockOptions.builder()
                        .keyPrefix("rlmicrometer:" + UUID.randomUUID() + ":").uri(uri).build());
                LockClient locks = LockClient.create(backend, LockOptions.defaults(),
                        MicrometerLockListener.forBackend(registry, backend));
                try {
                    StepVerifier.create(locks.withLock("order:42", lease -> Mono.just(lease.token())))
                            .expectNextCount(1).expectComplete().verify(TIMEOUT);
                    StepVerifier.create(locks.acquire("held")
                                    .flatMap(lease -> locks.tryAcquire("held").hasElement()
                                            .flatMap(got -> lease.release().thenReturn(got))))
                            .expectNext(false).expectComplete().verify(TIMEOUT);
                } finally {
                    locks.close().block(TIMEOUT);
                }
            } finally {
                redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
        assertThat(registry.get(MicrometerLockListener.ACQUIRE_WAIT).tags("backend", "redis", "outcome", "acquired")
                .timer().count()).isEqualTo(2);
        assertThat(registry.get(MicrometerLockListener.HOLD).tags("backend", "redis", "end", "released")
                .timer().count()).isEqualTo(2);
        assertThat(registry.get(MicrometerLockListener.CONTENTION).tags("backend", "redis").counter().count()).isEqualTo(1.0);
    }
}
