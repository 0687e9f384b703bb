package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.micrometer.MicrometerLockListener;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.stream.Collectors;
import io.reactivelocks.LockClock;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.local.LocalLockStore;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindException;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Binding, validation and bean conditions, without a server: a Lettuce {@code RedisClient} bean does not connect
 * until a lock operation is subscribed, so the client can be built against an address nobody listens on.
 */
class ReactiveLocksAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class));

    private static ApplicationContextRunner withUnconnectedRedis(ApplicationContextRunner runner) {
        return runner.withBean(RedisClient.class, () -> RedisClient.create("redis://127.0.0.1:1"),
                bd -> bd.setDestroyMethodName("shutdown"));
    }

    @Test
    void propertiesBindIntoTheClientOptions() {
        withUnconnectedRedis(runner).withPropertyValues(
                        "reactive-locks.backend=redis",
                        "reactive-locks.lease-time=12s",
                        "reactive-locks.renewal-interval=3s",
                        "reactive-locks.wait-timeout=1500ms",
                        "reactive-locks.request-timeout=2s",
                        "reactive-locks.redis.key-prefix=app:",
                        "reactive-locks.postgres.schema=locks",
                        "reactive-locks.postgres.table=app_locks")
                .run(context -> {
                    // the mutex client and the fair lock client, which is injected only when qualified
                    assertThat(context).hasNotFailed().hasBean("reactiveLocksClient").hasBean(ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN);
                    ReactiveLocksProperties p = context.getBean(ReactiveLocksProperties.class);
                    assertThat(p.getBackend()).isEqualTo(ReactiveLocksProperties.Backend.REDIS);
                    assertThat(p.getRedis().getKeyPrefix()).isEqualTo("app:");
                    assertThat(p.getPostgres().getSchema()).isEqualTo("locks");
                    assertThat(p.getPostgres().getTable()).isEqualTo("app_locks");
                    LockOptions o = context.getBean(LockClient.class).options();
                    assertThat(o.leaseTime()).isEqualTo(Duration.ofSeconds(12));
                    assertThat(o.renewalInterval()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(o.waitTimeout()).isEqualTo(Duration.ofMillis(1500));
                    assertThat(o.requestTimeout()).isEqualTo(Duration.ofSeconds(2));
                });
    }

    @Test
    void defaultsMatchTheLibrarysDefaults() {
        withUnconnectedRedis(runner).run(context -> {
            LockOptions o = context.getBean(LockClient.class).options();
            assertThat(o.leaseTime()).isEqualTo(LockOptions.defaults().leaseTime());
            assertThat(o.renewalInterval()).isEqualTo(LockOptions.defaults().renewalInterval());
            assertThat(o.requestTimeout()).isEqualTo(LockOptions.defaults().requestTimeout());
            // both wait at most 30 s: nothing waits forever unless asked to
            assertThat(o.waitTimeout()).isEqualTo(LockOptions.defaults().waitTimeout()).isEqualTo(Duration.ofSeconds(30));
        });
    }

    @Test
    void waitingUntilCancelledIsAskedForWithMinusOneAndZeroIsRefusedNamingTheProperty() {
        withUnconnectedRedis(runner).withPropertyValues("reactive-locks.wait-timeout=-1").run(context ->
                assertThat(context.getBean(LockClient.class).options().waitTimeout()).isNull());
        runner.withPropertyValues("reactive-locks.wait-timeout=0s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("reactive-locks.wait-timeout must be positive, or -1 to wait until cancelled");
        });
    }

    @Test
    void aCampaignOfTheElectionBeanWaitsUntilItLeadsWhateverTheWaitTimeout() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        LocalLockStore store = new LocalLockStore(vts, LockClock.of(vts));
        LockOptions options = LockOptions.builder().waitTimeout(Duration.ofSeconds(30)).scheduler(vts).clock(LockClock.of(vts)).build();
        LockClient leader = LocalLockBackend.client(store, options);
        LockClient candidate = LocalLockBackend.client(store, options);
        try {
            runner.withBean(LockClient.class, () -> candidate, bd -> bd.setDestroyMethodName("")).run(context -> {
                LeaderElection elections = context.getBean(LeaderElection.class);
                Disposable leading = LeaderElection.create(leader).campaign("scheduler", "a").subscribe();
                java.util.List<String> led = new java.util.concurrent.CopyOnWriteArrayList<>();
                AtomicReference<Throwable> failed = new AtomicReference<>();
                Disposable campaign = elections.campaign("scheduler", "b").subscribe(term -> led.add(term.toString()), failed::set);
                vts.advanceTimeBy(Duration.ofMinutes(5));
                assertThat(failed.get()).as("a standby candidate does not time out").isNull();
                assertThat(led).isEmpty();
                leading.dispose(); // resigns
                vts.advanceTimeBy(Duration.ofSeconds(5));
                assertThat(led).as("the candidate leads once the leader resigned").isNotEmpty();
                campaign.dispose();
            });
        } finally {
            leader.close().block(Duration.ofSeconds(5));
            candidate.close().block(Duration.ofSeconds(5));
            vts.dispose();
        }
    }

    @Test
    void aZeroLeaseTimeFailsNamingTheProperty() {
        runner.withPropertyValues("reactive-locks.lease-time=0s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reactive-locks.lease-time must be positive");
        });
    }

    @Test
    void aRenewalIntervalNotShorterThanTheLeaseFailsWhenThePropertiesAreBoundNamingBoth() {
        withUnconnectedRedis(runner).withPropertyValues("reactive-locks.lease-time=5s", "reactive-locks.renewal-interval=5s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    // failed while binding the properties (Boot's failure analysis names the property), not making a bean
                    assertThat(context.getStartupFailure()).hasCauseInstanceOf(ConfigurationPropertiesBindException.class)
                            .rootCause().isInstanceOf(BindValidationException.class)
                            .hasMessageContaining("reactive-locks.renewal-interval (5 s) must be shorter than reactive-locks.lease-time (5 s)");
                });
        withUnconnectedRedis(runner).withPropertyValues("reactive-locks.lease-time=2ms").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasCauseInstanceOf(ConfigurationPropertiesBindException.class).rootCause()
                    .hasMessageContaining("reactive-locks.lease-time 2 ms does not fit reactive-locks.renewal-interval");
        });
    }

    @Test
    void aStoreOptionTheStoreRefusesFailsNamingTheProperty() {
        withUnconnectedRedis(runner).withPropertyValues("reactive-locks.redis.key-prefix=app{1}:").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("Property reactive-locks.redis.key-prefix with value 'app{1}:' is invalid");
        });
    }

    @Test
    void anUnknownBackendFailsNamingTheProperty() {
        runner.withPropertyValues("reactive-locks.backend=mongo").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("reactive-locks.backend");
        });
    }

    @Test
    void aLeaderElectionBeanRunsOnTheClientBeanUnlessTheApplicationDefinesOne() {
        withUnconnectedRedis(runner).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(io.reactivelocks.election.LeaderElection.class);
            assertThat(context.getBean(io.reactivelocks.election.LeaderElection.class).toString())
                    .contains(context.getBean(LockClient.class).toString());
        });
        io.reactivelocks.election.LeaderElection own = io.reactivelocks.election.LeaderElection.create(LocalLockBackend.client());
        withUnconnectedRedis(runner).withBean(io.reactivelocks.election.LeaderElection.class, () -> own).run(context ->
                assertThat(context).hasNotFailed().getBean(io.reactivelocks.election.LeaderElection.class).isSameAs(own));
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(io.reactivelocks.election.LeaderElection.class));
    }

    @Test
    void withoutABackendBeanThereIsNoClientAndTheReportSaysWhy() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(LockClient.class);
            String report = ConditionEvaluationReport.get(context.getBeanFactory()).getConditionAndOutcomesBySource()
                    .entrySet().stream()
                    .filter(e -> e.getKey().contains("LockClientConfiguration") || e.getKey().contains("LockStoreConceptsConfiguration"))
                    .map(e -> e.getKey() + ": " + java.util.stream.StreamSupport.stream(e.getValue().spliterator(), false)
                            .map(c -> c.getOutcome().getMessage()).collect(Collectors.joining("; ")))
                    .collect(Collectors.joining("\n"));
            assertThat(report)
                    .contains("RedisLockClientConfiguration#reactiveLocksStore")
                    .contains("did not find any beans of type io.lettuce.core.RedisClient")
                    .contains("SpringDataRedisLockClientConfiguration#reactiveLocksStore")
                    .contains("did not find any beans of type org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory")
                    .contains("R2dbcLockClientConfiguration#reactiveLocksStore")
                    .contains("did not find any beans of type io.r2dbc.spi.ConnectionFactory")
                    .contains("LockStoreConceptsConfiguration#reactiveLocksClient")
                    .contains("did not find any beans of type io.reactivelocks.LockStore");
        });
    }

    @Test
    void redisModeBesideBootsR2dbcAutoConfigurationLocksOnRedisAndLeavesTheConnectionFactoryAlone() {
        for (String backend : new String[] {"redis", "auto"}) {
            withUnconnectedRedis(new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
                            org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration.class,
                            ReactiveLocksAutoConfiguration.class)))
                    // nothing listens there: a bean of the starter that used the connection factory would fail
                    .withPropertyValues("reactive-locks.backend=" + backend,
                            "spring.r2dbc.url=r2dbc:postgresql://app:secret@127.0.0.1:1/nothing")
                    .run(context -> {
                        assertThat(context).as(backend).hasNotFailed().hasSingleBean(io.r2dbc.spi.ConnectionFactory.class);
                        assertThat(context.getBean(LockClient.class).toString()).as(backend).contains("redis");
                        assertThat(context.getBean(io.reactivelocks.task.TaskQueue.class))
                                .isNotInstanceOf(io.reactivelocks.r2dbc.postgresql.PostgresTaskQueue.class);
                        assertThat(context.getBean(io.reactivelocks.window.WindowLock.class).toString()).contains("Redis");
                        assertThat(context.getBean(io.reactivelocks.semaphore.Semaphore.class).toString()).contains("redis");
                    });
        }
    }

    @Test
    void aBackendPropertyExcludesTheOtherBackend() {
        withUnconnectedRedis(runner).withPropertyValues("reactive-locks.backend=postgres").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(LockClient.class);
            assertThat(ConditionEvaluationReport.get(context.getBeanFactory()).getConditionAndOutcomesBySource()
                    .get(RedisLockClientConfiguration.class.getName()).isFullMatch()).isFalse();
        });
    }

    @Test
    void aConnectionFactoryThatIsNotPostgresFailsWithAClearMessage() {
        runner.withBean(io.r2dbc.spi.ConnectionFactory.class, () -> new io.r2dbc.spi.ConnectionFactory() {
            @Override
            public org.reactivestreams.Publisher<? extends io.r2dbc.spi.Connection> create() {
                return reactor.core.publisher.Mono.error(new UnsupportedOperationException("not used"));
            }

            @Override
            public io.r2dbc.spi.ConnectionFactoryMetadata getMetadata() {
                return () -> "H2";
            }
        }).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("Property reactive-locks.backend with value 'auto' is invalid")
                    .hasMessageContaining("needs PostgreSQL, but the R2DBC ConnectionFactory bean is H2");
        });
    }

    @Test
    void aUserDefinedClientWins() {
        LockClient mine = LocalLockBackend.client();
        try {
            withUnconnectedRedis(runner).withBean(LockClient.class, () -> mine, bd -> bd.setDestroyMethodName(""))
                    .run(context -> {
                        assertThat(context).hasNotFailed().doesNotHaveBean("reactiveLocksClient");
                        assertThat(context.getBean(LockClient.class)).isSameAs(mine);
                        assertThat(context).doesNotHaveBean(LockClientFactoryBean.class);
                    });
        } finally {
            mine.close().block(Duration.ofSeconds(5));
        }
    }

    @Test
    void aMeterRegistryBeanGetsTheMetersTaggedWithTheBackend() {
        withUnconnectedRedis(runner).withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            context.getBean(LockClient.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get(MicrometerLockListener.LOSSES).tags("backend", "redis").counter().count()).isZero();
            assertThat(registry.find(MicrometerLockListener.ACQUIRE_WAIT).tag("concept", "lock").timers()).hasSize(2);
            // every concept bean reports to the same meters, tagged with its concept
            context.getBean(io.reactivelocks.semaphore.Semaphore.class);
            assertThat(registry.find(MicrometerLockListener.ACQUIRE_WAIT).tag("concept", "semaphore").timers()).hasSize(2);
        });
    }

    @Test
    void metricsCanBeSwitchedOff() {
        withUnconnectedRedis(runner).withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("reactive-locks.metrics-enabled=false").run(context -> {
                    context.getBean(LockClient.class);
                    assertThat(context.getBean(MeterRegistry.class).getMeters()).isEmpty();
                });
    }

    @Test
    void theClientIsClosedAfterAWebServerStopsAndBeforeSpringDataRedisStops() {
        // higher phases stop first: web server graceful shutdown / stop run at DEFAULT_PHASE - 1024 / - 2048,
        // LettuceConnectionFactory (which shuts its Lettuce client down in stop()) at phase 0
        assertThat(LockClientFactoryBean.PHASE)
                .isLessThan(org.springframework.context.SmartLifecycle.DEFAULT_PHASE - 2048)
                .isGreaterThan(new org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory().getPhase());
    }

    @Test
    void configurationMetadataDescribesTheProperties() throws Exception {
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json).contains("\"reactive-locks.backend\"", "\"reactive-locks.lease-time\"",
                    "\"reactive-locks.renewal-interval\"", "\"reactive-locks.wait-timeout\"",
                    "\"reactive-locks.request-timeout\"", "\"reactive-locks.redis.key-prefix\"",
                    "\"reactive-locks.postgres.schema\"", "\"reactive-locks.postgres.table\"", "\"30s\"",
                    "\"reactive-locks.annotations.enabled\"", "\"reactive-locks.web.service-unavailable\"");
            // the wait timeout's default is named
            tools.jackson.databind.JsonNode waitTimeout = null;
            for (tools.jackson.databind.JsonNode property : tools.jackson.databind.json.JsonMapper.builder().build()
                    .readTree(json).get("properties")) {
                if (property.get("name").toString().equals("\"reactive-locks.wait-timeout\"")) {
                    waitTimeout = property;
                }
            }
            assertThat(waitTimeout).as(json).isNotNull();
            assertThat(String.valueOf(waitTimeout.get("defaultValue"))).isEqualTo("\"30s\"");
        }
    }

    @Test
    void theAutoConfigurationsShareOneNamingScheme() throws Exception {
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(
                "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports")) {
            assertThat(in).isNotNull();
            java.util.List<String> imports = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .map(String::trim).filter(l -> !l.isEmpty()).toList();
            assertThat(imports).containsExactly(ReactiveLocksAutoConfiguration.class.getName(),
                    ReactiveLocksAnnotationsAutoConfiguration.class.getName(), ReactiveLocksWebFluxAutoConfiguration.class.getName(),
                    ReactiveLocksDashboardAutoConfiguration.class.getName());
            assertThat(imports).allSatisfy(name -> assertThat(name).matches("io\\.reactivelocks\\.spring\\.boot\\.ReactiveLocks\\w*AutoConfiguration"));
        }
    }

    @Test
    void anApplicationsOwnStoreSessionGetsEveryConceptBean() {
        // an in-memory session, as an application would declare for development: no Redis, SQL, etcd or ZooKeeper client
        runner.withBean(io.reactivelocks.LockStore.class, io.reactivelocks.local.LocalLocks::open, bd -> bd.setDestroyMethodName(""))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasBean("reactiveLocksClient")
                            .hasSingleBean(io.reactivelocks.semaphore.Semaphore.class)
                            .hasSingleBean(io.reactivelocks.rwlock.ReadWriteLock.class)
                            .hasSingleBean(io.reactivelocks.window.WindowLock.class)
                            .hasSingleBean(LeaderElection.class)
                            .hasBean(ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN);
                    io.reactivelocks.LockStore store = context.getBean(io.reactivelocks.LockStore.class);
                    LockClient locks = context.getBeanProvider(LockClient.class).getIfUnique();
                    io.reactivelocks.Lease lease = locks.acquire("order:1").block(Duration.ofSeconds(5));
                    assertThat(store.locks().tryAcquire("order:1").blockOptional(Duration.ofSeconds(5)))
                            .as("the bean's lock is held in the application's session").isEmpty();
                    io.reactivelocks.Lease permit = context.getBean(io.reactivelocks.semaphore.Semaphore.class)
                            .tryAcquire("pool", 1).block(Duration.ofSeconds(5));
                    assertThat(permit).isNotNull();
                    LockClient fair = context.getBean(ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN, LockClient.class);
                    assertThat(fair).isNotSameAs(locks);
                    assertThat(fair.tryAcquire("queue:1").block(Duration.ofSeconds(5))).isNotNull();
                    assertThat(lease.token()).isPositive();
                });
    }
}
