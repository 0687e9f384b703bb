package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.spring.Locked;
import io.reactivelocks.spring.LockedContext;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** {@code @Locked} switched on by the starter, on the auto-configured client over a real redis-server. */
class ReactiveLocksAnnotationsAutoConfigurationTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private final String prefix = "rlboot:" + UUID.randomUUID().toString().substring(0, 8) + ":";

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class, ReactiveLocksAnnotationsAutoConfiguration.class))
                .withBean(RedisClient.class, () -> RedisClient.create(server.url()), bd -> bd.setDestroyMethodName("shutdown"))
                .withBean(Orders.class)
                .withPropertyValues("reactive-locks.redis.key-prefix=" + prefix, "reactive-locks.lease-time=10s",
                        "reactive-locks.request-timeout=20s");
    }

    @Test
    void lockedMethodsRunUnderTheAutoConfiguredClient() {
        runner().run(context -> {
            // the first use connects (Lettuce's event loops start): slow on a loaded machine, not what is tested here
            context.getBean(io.reactivelocks.LockClient.class).inspect("warm-up").retry(2).block(Duration.ofSeconds(90));
            Orders orders = context.getBean(Orders.class);
            assertThat(AopUtils.isCglibProxy(orders)).as("proxied by class, as Boot proxies @Transactional beans").isTrue();
            StepVerifier.create(orders.ship("42"))
                    .assertNext(name -> assertThat(name).isEqualTo("order:42"))
                    .expectComplete()
                    .verify(TIMEOUT);
        });
    }

    /** @return another instance's session on the same server and key prefix */
    private LockStore elsewhere(RedisClient redis) {
        return RedisLocks.connect(redis, RedisLockOptions.builder().keyPrefix(prefix).build());
    }

    @Test
    void aLockedCallOnALockHeldElsewhereFailsWithLockTimeoutExceptionAfterTheWaitTimeout() {
        RedisClient redis = RedisClient.create(server.url());
        LockStore otherSession = elsewhere(redis);
        LockClient other = otherSession.locks(LockOptions.defaults());
        try {
            Lease held = other.acquire("order:7").block(Duration.ofSeconds(90));
            runner().withPropertyValues("reactive-locks.wait-timeout=300ms").run(context -> {
                context.getBean(LockClient.class).inspect("warm-up").retry(2).block(Duration.ofSeconds(90));
                StepVerifier.create(context.getBean(Orders.class).ship("7"))
                        .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(LockTimeoutException.class,
                                t -> assertThat(t.waitTimeout()).isEqualTo(Duration.ofMillis(300))))
                        .verify(TIMEOUT);
            });
            held.release().block(TIMEOUT);
        } finally {
            otherSession.close().block(TIMEOUT);
            redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void withTheApplicationsOwnClientOnTheLibrarysDefaultsLockedCallsWaitTheStartersWaitTimeout() {
        RedisClient redis = RedisClient.create(server.url());
        LockStore otherSession = elsewhere(redis);
        LockStore ownSession = elsewhere(redis);
        LockClient other = otherSession.locks(LockOptions.defaults());
        LockClient own = ownSession.locks(LockOptions.defaults());
        try {
            assertThat(own.options().isWaitTimeoutSet()).as("the library's default, not a choice").isFalse();
            Lease held = other.acquire("order:8").block(Duration.ofSeconds(90));
            runner().withBean(LockClient.class, () -> own, bd -> bd.setDestroyMethodName(""))
                    .withPropertyValues("reactive-locks.wait-timeout=400ms").run(context -> {
                        assertThat(context.getBean(LockClient.class)).isSameAs(own);
                        StepVerifier.create(context.getBean(Orders.class).ship("8"))
                                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(LockTimeoutException.class,
                                        t -> assertThat(t.waitTimeout()).isEqualTo(Duration.ofMillis(400))))
                                .verify(TIMEOUT);
                    });
            held.release().block(TIMEOUT);
        } finally {
            ownSession.close().block(TIMEOUT);
            otherSession.close().block(TIMEOUT);
            redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void thePropertySwitchesItOff() {
        runner().withPropertyValues("reactive-locks.annotations.enabled=false").run(context -> {
            assertThat(AopUtils.isAopProxy(context.getBean(Orders.class))).isFalse();
            StepVerifier.create(context.getBean(Orders.class).ship("42")).expectComplete().verify(TIMEOUT);
        });
    }

    /** An application bean with a locked method. */
    public static class Orders {
        /**
         * @param id an order id
         * @return the name of the lock the call ran under (empty when not locked)
         */
        @Locked("order:#{#p0}")
        public Mono<String> ship(String id) {
            return LockedContext.lease().map(Lease::name);
        }
    }
}
