package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.micrometer.ObservationLockListener;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import tools.jackson.databind.json.JsonMapper;

/**
 * The health indicator, the {@code reactivelocks} endpoint and the observations of the auto-configured client, against
 * a real redis-server that the test pauses (every request hangs) and resumes.
 */
class ReactiveLocksActuatorTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private final String prefix = "rlops:" + UUID.randomUUID().toString().substring(0, 8) + ":";

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class))
                .withBean(RedisClient.class, () -> RedisClient.create(server.url()), bd -> bd.setDestroyMethodName("shutdown"))
                .withPropertyValues("reactive-locks.redis.key-prefix=" + prefix, "reactive-locks.lease-time=10s",
                        "reactive-locks.health.timeout=1s", "reactive-locks.request-timeout=2s",
                        "reactive-locks.shutdown-timeout=5s");
    }

    private static Health health(ReactiveHealthIndicator indicator) {
        return indicator.health().block(TIMEOUT);
    }

    @Test
    void healthIsUpWithDetailsDownWhileTheServerIsPausedAndUpAgainAfter() {
        runner().run(context -> {
            ReactiveHealthIndicator indicator = context.getBean("reactiveLocksHealthIndicator", ReactiveHealthIndicator.class);
            LockClient locks = context.getBean(LockClient.class);
            Lease lease = locks.acquire("held").block(TIMEOUT);
            Health up = health(indicator);
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails()).containsEntry("backend", "redis").containsEntry("heldLeases", 1)
                    .containsEntry("pendingAcquires", 0).containsEntry("renewalFailures", 0L).containsEntry("losses", 0L);

            Instant beforeOutage = Instant.now();
            Instant since;
            server.pause();
            try {
                Health down = health(indicator);
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                // in words: which store did not answer within how long, and since when
                assertThat(down.getDetails()).containsEntry("error", "redis did not answer within 1 s")
                        .containsEntry("backend", "redis").containsKey("since");
                since = Instant.parse((String) down.getDetails().get("since"));
                assertThat(since).isAfterOrEqualTo(beforeOutage.truncatedTo(ChronoUnit.MILLIS).minusMillis(1));
                Health stillDown = health(indicator);
                assertThat(stillDown.getDetails()).as("since the first failed check of this outage")
                        .containsEntry("since", down.getDetails().get("since"))
                        .containsEntry("error", "redis did not answer within 1 s");
            } finally {
                server.resume();
            }
            Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100))
                    .until(() -> health(indicator).getStatus().equals(Status.UP));
            assertThat(health(indicator).getDetails()).doesNotContainKeys("error", "since").containsEntry("heldLeases", 1);

            // the next outage has its own start
            server.pause();
            try {
                Health again = health(indicator);
                assertThat(again.getStatus()).isEqualTo(Status.DOWN);
                assertThat(Instant.parse((String) again.getDetails().get("since"))).isAfter(since);
            } finally {
                server.resume();
            }
            Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100))
                    .until(() -> health(indicator).getStatus().equals(Status.UP));
            lease.release().block(TIMEOUT);
        });
    }

    @Test
    void aDownHealthSaysInWordsHowLongTheStoreDidNotAnswerWhenTheClientsRequestTimeoutEndsTheCheckFirst() {
        runner().withPropertyValues("reactive-locks.request-timeout=500ms", "reactive-locks.health.timeout=5s").run(context -> {
            ReactiveHealthIndicator indicator = context.getBean("reactiveLocksHealthIndicator", ReactiveHealthIndicator.class);
            // connected first: the first request of a loaded JVM may take longer than 500 ms
            Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100))
                    .until(() -> health(indicator).getStatus().equals(Status.UP));
            server.pause();
            try {
                Health down = health(indicator);
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                // not Reactor's or the client's exception text: the store, what it did not do, within how long
                assertThat(down.getDetails()).containsEntry("error", "redis did not answer within 500 ms").containsKey("since");
            } finally {
                server.resume();
            }
            Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100))
                    .until(() -> health(indicator).getStatus().equals(Status.UP));
        });
    }

    @Test
    void theEndpointListsHeldLeasesWithTokenAndPayloadAndTheLocksWaitedFor() throws Exception {
        runner().run(context -> {
            LockClient locks = context.getBean(LockClient.class);
            Lease lease = locks.acquire("order:42", locks.options().mutate().payload("node-1").build()).block(TIMEOUT);
            Disposable waiting = locks.acquire("order:42").subscribe();
            try {
                Awaitility.await().atMost(TIMEOUT).until(() -> locks.metrics().pendingAcquireCount() == 1);
                ReactiveLocksEndpoint.LocksDescriptor answer = context.getBean(ReactiveLocksEndpoint.class).locks().block(TIMEOUT);
                ReactiveLocksEndpoint.ClientDescriptor client = answer.clients().get("reactiveLocksClient");
                assertThat(client.held()).singleElement().satisfies(l -> {
                    assertThat(l.name()).isEqualTo("order:42");
                    assertThat(l.token()).isEqualTo(lease.token());
                    assertThat(l.payload()).isEqualTo("node-1");
                    assertThat(l.remainingMillis()).isBetween(1L, 10_000L);
                });
                assertThat(client.waiting()).containsExactly(new ReactiveLocksEndpoint.WaitDescriptor("order:42", 1));

                String json = JsonMapper.builder().build().writeValueAsString(answer);
                assertThat(json).contains("\"reactiveLocksClient\"", "\"name\":\"order:42\"", "\"token\":" + lease.token(),
                        "\"payload\":\"node-1\"", "\"acquires\":1").doesNotContain(lease.owner());
            } finally {
                waiting.dispose();
                lease.release().block(TIMEOUT);
            }
        });
    }

    @Test
    void theEndpointListsWhatTheStoreHoldsAcrossClientsAndForceReleasesOnlyAsAWriteOperation() {
        runner().run(context -> {
            LockClient locks = context.getBean(LockClient.class);
            io.reactivelocks.LockStore store = context.getBean(io.reactivelocks.LockStore.class);
            LockClient other = store.locks(locks.options()); // another client of the same store
            Lease lease = other.acquire("job:7", locks.options().mutate().payload("node-2").build()).block(TIMEOUT);
            ReactiveLocksEndpoint endpoint = context.getBean(ReactiveLocksEndpoint.class);

            ReactiveLocksEndpoint.LocksDescriptor answer = endpoint.locks().block(TIMEOUT);
            assertThat(answer.clients().get("reactiveLocksClient").held()).as("the bean's own client holds nothing").isEmpty();
            assertThat(answer.store().error()).isNull();
            assertThat(answer.store().held()).singleElement().satisfies(g -> {
                assertThat(g.name()).isEqualTo("job:7");
                assertThat(g.concept()).isEqualTo("lock");
                assertThat(g.role()).isEqualTo("holder");
                assertThat(g.token()).isEqualTo(lease.token());
                assertThat(g.payload()).isEqualTo("node-2");
                assertThat(g.remainingMillis()).isBetween(1L, 10_000L);
            });
            assertThat(endpoint.locksUnder("job:").block(TIMEOUT).held()).hasSize(1);
            assertThat(endpoint.locksUnder("other:").block(TIMEOUT).held()).isEmpty();
            String json = JsonMapper.builder().build().writeValueAsString(answer);
            assertThat(json).contains("\"name\":\"job:7\"").doesNotContain(lease.owner());

            Endpoint annotation = ReactiveLocksEndpoint.class.getAnnotation(Endpoint.class);
            assertThat(annotation.defaultAccess()).as("force-release is refused until access is unrestricted")
                    .isEqualTo(org.springframework.boot.actuate.endpoint.Access.READ_ONLY);
            java.util.concurrent.atomic.AtomicReference<String> asked = new java.util.concurrent.atomic.AtomicReference<>();
            lease.revoked().subscribe(asked::set);
            Awaitility.await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(200)).until(() -> {
                assertThat(endpoint.revoke("job:7", "deploy").block(TIMEOUT).asked()).isTrue();
                return asked.get() != null;
            });
            assertThat(asked.get()).isEqualTo("deploy");
            assertThat(endpoint.revoke("free:1", null).block(TIMEOUT))
                    .isEqualTo(new ReactiveLocksEndpoint.RevokedDescriptor("free:1", "requested by an operator", false));
            ReactiveLocksEndpoint.ReleasedDescriptor released = endpoint.forceRelease("job:7").block(TIMEOUT);
            assertThat(released.released()).extracting(ReactiveLocksEndpoint.GrantDescriptor::token).containsExactly(lease.token());
            assertThat(endpoint.locksUnder("job:").block(TIMEOUT).held()).isEmpty();
            Lease next = locks.tryAcquire("job:7").block(TIMEOUT);
            assertThat(next.token()).isGreaterThan(lease.token());
            next.release().block(TIMEOUT);
        });
    }

    @Test
    void waitsAndHoldsAreObservedAsChildrenOfTheCallersObservation() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        runner().withBean(ObservationRegistry.class, () -> registry).run(context -> {
            LockClient locks = context.getBean(LockClient.class);
            io.micrometer.observation.Observation caller = io.micrometer.observation.Observation.start("request", registry);
            StepVerifier.create(locks.withLock("observed", lease -> Mono.just(lease.token()))
                            .contextWrite(c -> c.put(ObservationLockListener.OBSERVATION_CONTEXT_KEY, caller)))
                    .expectNextCount(1)
                    .expectComplete()
                    .verify(TIMEOUT);
            caller.stop();
        });
        TestObservationRegistryAssert.assertThat(registry)
                .hasObservationWithNameEqualTo(ObservationLockListener.WAIT).that()
                .hasLowCardinalityKeyValue("backend", "redis").hasLowCardinalityKeyValue("outcome", "acquired")
                .hasHighCardinalityKeyValue("lock.name", "observed")
                .hasParentObservationContextMatching(parent -> "request".equals(parent.getName()));
        TestObservationRegistryAssert.assertThat(registry)
                .hasObservationWithNameEqualTo(ObservationLockListener.HOLD).that()
                .hasLowCardinalityKeyValue("outcome", "released");
    }

    @Test
    void theHealthIndicatorCanBeSwitchedOffAndWithoutTheActuatorThereIsNeitherHealthNorEndpoint() {
        runner().withPropertyValues("management.health.reactivelocks.enabled=false").run(context ->
                assertThat(context).hasNotFailed().doesNotHaveBean("reactiveLocksHealthIndicator")
                        .hasSingleBean(ReactiveLocksEndpoint.class));
        runner().withClassLoader(new FilteredClassLoader(ReactiveHealthIndicator.class, Endpoint.class)).run(context ->
                assertThat(context).hasNotFailed().hasBean("reactiveLocksClient")
                        .doesNotHaveBean("reactiveLocksHealthIndicator").doesNotHaveBean(ReactiveLocksEndpoint.class));
    }
}
