package io.reactivelocks.testcontainers;

import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The sample of docs/testing.md: a store container and its lock client in a JUnit 5 test. */
@Testcontainers
class DocsTestcontainersTest {

    static {
        LocalImages.require(); // before the extension starts the container: fail saying what to install
    }

    static final DockerImageName IMAGE = LocalImages.REDIS;

    // tag::container[]
    @Container
    static final RedisLockContainer REDIS = new RedisLockContainer(IMAGE);   // new RedisLockContainer(): the image redis:7

    @Test
    void onlyOneCheckoutAtATime() {
        LockClient locks = REDIS.lockClient();                     // a new client, closed with the container
        RedisClient redis = REDIS.redisClient();                   // the store's own client, when the test needs it
        StepVerifier.create(locks.withLock("cart-42", lease -> checkout(lease.token())))
                .expectNextMatches(receipt -> receipt.startsWith("checked out with fence "))
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }
    // end::container[]

    static Mono<String> checkout(long token) {
        return Mono.just("checked out with fence " + token);
    }
}
