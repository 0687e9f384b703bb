package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.reactivelocks.LockClient;
import io.reactivelocks.spring.boot.ReactiveLocksAutoConfiguration;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The Spring Boot samples of docs/spring.md (and the README's quick start): the starter on a real redis-server. */
class DocsSpringBootTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void theStarterMakesTheClientOnTheApplicationsRedisClient() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class))
                .withBean(RedisClient.class, () -> RedisClient.create(server.url()), bd -> bd.setDestroyMethodName("shutdown"))
                .withPropertyValues("reactive-locks.lease-time=10s")
                .withBean(Orders.class)
                .withBean(Ledger.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    StepVerifier.create(context.getBean(Orders.class).charge("42"))
                            .expectNextMatches(r -> r.startsWith("charged 42 with fence "))
                            .expectComplete()
                            .verify(STEP);
                    StepVerifier.create(context.getBean(Ledger.class).post("entry"))
                            .expectNextMatches(token -> token > 0)
                            .expectComplete()
                            .verify(STEP);
                    assertThat(context.getBean("reactiveLocksFairLock")).isNotSameAs(context.getBean(LockClient.class));
                });
    }
}
