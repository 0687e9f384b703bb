package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockStore;
import io.reactivelocks.local.LocalTaskStore;
import io.reactivelocks.micrometer.MicrometerLockListener;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.task.TaskState;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The auto-configured client on a {@code RedisClient} bean, against a real redis-server. */
class RedisAutoConfigurationTest {

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
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class))
                .withBean(RedisClient.class, () -> RedisClient.create(server.url()), bd -> bd.setDestroyMethodName("shutdown"))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("reactive-locks.redis.key-prefix=" + prefix, "reactive-locks.lease-time=10s");
    }

    @Test
    void everyConceptBeanComesFromOneSessionOverOneCommandAndOnePubSubConnection() {
        RedisClient adminClient = RedisClient.create(server.url());
        try (io.lettuce.core.api.StatefulRedisConnection<String, String> admin = adminClient.connect()) {
            long before = admin.sync().clientList().lines().filter(l -> !l.isBlank()).count();
            runner().run(context -> {
                assertThat(context).hasSingleBean(io.reactivelocks.LockStore.class);
                LockClient locks = context.getBean(LockClient.class);
                LockClient fair = context.getBean(ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN, LockClient.class);
                io.reactivelocks.semaphore.Semaphore permits = context.getBean(io.reactivelocks.semaphore.Semaphore.class);
                io.reactivelocks.rwlock.ReadWriteLock rw = context.getBean(io.reactivelocks.rwlock.ReadWriteLock.class);
                io.reactivelocks.window.WindowLock windows = context.getBean(io.reactivelocks.window.WindowLock.class);
                io.reactivelocks.task.TaskQueue tasks = context.getBean(io.reactivelocks.task.TaskQueue.class);
                reactor.core.publisher.Flux.concat(
                                locks.withLock("a", l -> Mono.just(1)),
                                fair.withLock("b", l -> Mono.just(2)),
                                permits.withPermit("c", 2, l -> Mono.just(3)),
                                rw.withReadLock("d", l -> Mono.just(4)),
                                windows.tryClaim("e", Duration.ofHours(1)).thenReturn(5),
                                tasks.register("f", "t", 0).thenReturn(6))
                        .blockLast(TIMEOUT);
                // a waiter: it listens for the release on the session's pub/sub connection
                io.reactivelocks.Lease held = locks.acquire("g").block(TIMEOUT);
                reactor.core.Disposable waiter = locks.acquire("g").subscribe();
                org.awaitility.Awaitility.await().atMost(TIMEOUT)
                        .until(() -> admin.sync().clientList().lines().filter(l -> !l.isBlank()).count() - before >= 2);
                assertThat(admin.sync().clientList().lines().filter(l -> !l.isBlank()).count() - before)
                        .as("every concept bean over the session's two connections").isEqualTo(2);
                waiter.dispose();
                held.release().block(TIMEOUT);
                tasks.remove("f", "t").block(TIMEOUT);
            });
        } finally {
            adminClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void theClientLocksOnTheRedisServerAndReportsToTheMetersAndTheApplicationsListener() {
        java.util.List<String> acquired = new java.util.concurrent.CopyOnWriteArrayList<>();
        runner().withBean(LockListener.class, () -> new LockListener() {
            @Override
            public void onAcquired(String name, long token, Duration waited) {
                acquired.add(name);
            }
        }).run(context -> {
            LockClient locks = context.getBean(LockClient.class);
            StepVerifier.create(locks.withLock("order:42", lease -> Mono.just(lease.token())))
                    .assertNext(token -> assertThat(token).isPositive())
                    .expectComplete()
                    .verify(TIMEOUT);
            StepVerifier.create(locks.acquire("held")
                            .flatMap(lease -> locks.tryAcquire("held").hasElement()
                                    .flatMap(got -> lease.release().thenReturn(got))))
                    .expectNext(false)
                    .expectComplete()
                    .verify(TIMEOUT);

            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get(MicrometerLockListener.ACQUIRE_WAIT).tags("backend", "redis", "concept", "lock", "outcome", "acquired")
                    .timer().count()).isEqualTo(2);
            assertThat(registry.get(MicrometerLockListener.CONTENTION).tags("backend", "redis", "concept", "lock").counter().count())
                    .isEqualTo(1.0);
            assertThat(acquired).containsExactly("order:42", "held");
        });
    }

    @Test
    void aSemaphoreBeanGrantsAtMostNPermitsAndReleasesThemWithTheContext() {
        String name = "pool-" + UUID.randomUUID();
        AtomicReference<io.reactivelocks.Lease> kept = new AtomicReference<>();
        runner().run(context -> {
            assertThat(context).hasSingleBean(io.reactivelocks.semaphore.Semaphore.class);
            io.reactivelocks.semaphore.Semaphore pool = context.getBean(io.reactivelocks.semaphore.Semaphore.class);
            kept.set(pool.tryAcquire(name, 1).block(TIMEOUT));
            assertThat(kept.get()).isNotNull();
            assertThat(pool.tryAcquire(name, 1).blockOptional(TIMEOUT)).as("N = 1").isEmpty();
        });
        runner().run(context -> assertThat(context.getBean(io.reactivelocks.semaphore.Semaphore.class)
                .tryAcquire(name, 1).flatMap(l -> l.release().thenReturn(l.token())).block(TIMEOUT))
                .as("released when the first context closed").isGreaterThan(kept.get().token()));
    }

    @Test
    void aReadWriteLockBeanSharesReadsExcludesWritesAndReleasesWithTheContext() {
        String name = "catalog-" + UUID.randomUUID();
        AtomicReference<io.reactivelocks.Lease> kept = new AtomicReference<>();
        runner().run(context -> {
            assertThat(context).hasSingleBean(io.reactivelocks.rwlock.ReadWriteLock.class);
            io.reactivelocks.rwlock.ReadWriteLock rw = context.getBean(io.reactivelocks.rwlock.ReadWriteLock.class);
            kept.set(rw.read().tryAcquire(name).block(TIMEOUT));
            assertThat(kept.get()).isNotNull();
            assertThat(rw.read().tryAcquire(name).flatMap(l -> l.release().thenReturn(true)).block(TIMEOUT)).as("readers share").isTrue();
            assertThat(rw.write().tryAcquire(name).blockOptional(TIMEOUT)).as("a writer waits for the reader").isEmpty();
        });
        runner().run(context -> assertThat(context.getBean(io.reactivelocks.rwlock.ReadWriteLock.class)
                .write().tryAcquire(name).flatMap(l -> l.release().thenReturn(l.token())).block(TIMEOUT))
                .as("the reader released when the first context closed").isGreaterThan(kept.get().token()));
    }

    @Test
    void aFairLockBeanBesideTheClientHandsTheLockToItsWaiterAndReleasesWithTheContext() {
        String name = "fair-" + java.util.UUID.randomUUID();
        AtomicReference<io.reactivelocks.Lease> kept = new AtomicReference<>();
        runner().run(context -> kept.set(StoreBeanChecks.fairLockBeanWorks(context, name)));
        runner().run(context -> StoreBeanChecks.fairLockIsFree(context, name, kept.get().token()));
    }

    @Test
    void aWindowLockBeanClaimsOnTheSameRedisOncePerWindow() {
        runner().run(context -> {
            assertThat(context).hasSingleBean(WindowLock.class);
            WindowLock windows = context.getBean(WindowLock.class);
            String job = "job-" + UUID.randomUUID();
            WindowClaim claim = windows.tryClaim(job, Duration.ofHours(1)).block(TIMEOUT);
            assertThat(claim).isNotNull();
            assertThat(claim.token()).isPositive();
            assertThat(windows.tryClaim(job, Duration.ofHours(1)).blockOptional(TIMEOUT)).isEmpty();
        });
    }

    @Test
    void anApplicationsOwnWindowLockWins() {
        WindowLock own = WindowLock.create(new io.reactivelocks.local.LocalWindowStore());
        runner().withBean(WindowLock.class, () -> own).run(context ->
                assertThat(context.getBean(WindowLock.class)).isSameAs(own));
    }

    @Test
    void closingTheContextReleasesTheClientsLeases() {
        AtomicReference<Lease> held = new AtomicReference<>();
        runner().run(context -> held.set(context.getBean(LockClient.class).acquire("kept").block(TIMEOUT)));
        assertThat(held.get()).isNotNull();
        assertFree("kept");
    }

    @Test
    void aSpringDataLettuceConnectionFactoryWorksTooAndClosingTheContextReleasesItsLeases() {
        AtomicReference<Lease> held = new AtomicReference<>();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class))
                .withBean(LettuceConnectionFactory.class,
                        () -> new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port())))
                .withPropertyValues("reactive-locks.redis.key-prefix=" + prefix, "reactive-locks.lease-time=10s")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasBean("reactiveLocksClient").hasBean(ReactiveLocksAutoConfiguration.FAIR_LOCK_BEAN)
                            .hasSingleBean(WindowLock.class);
                    assertThat(context.getBeanProvider(LockClient.class).getIfUnique()).as("by type: the mutex client").isNotNull();
                    assertThat(context.getBean(WindowLock.class).tryClaim("data-redis-job-" + UUID.randomUUID(), Duration.ofHours(1))
                            .blockOptional(TIMEOUT)).isPresent();
                    LockClient locks = context.getBean(LockClient.class);
                    StepVerifier.create(locks.withLock("order:7", lease -> Mono.just(lease.token())))
                            .assertNext(token -> assertThat(token).isPositive())
                            .expectComplete()
                            .verify(TIMEOUT);
                    held.set(locks.acquire("kept-by-data-redis").block(TIMEOUT));
                });
        assertThat(held.get()).isNotNull();
        // released when the context closes: the client stops in a phase before the connection factory (phase 0)
        assertFree("kept-by-data-redis");
    }

    @Test
    void aTaskQueueBeanCapturesOnTheSameServerAndIsClosedWithTheContext() {
        AtomicReference<TaskQueue> kept = new AtomicReference<>();
        runner().run(context -> {
            assertThat(context).hasSingleBean(TaskQueue.class);
            TaskQueue tasks = context.getBean(TaskQueue.class);
            kept.set(tasks);
            assertThat(tasks.options().leaseTime()).isEqualTo(Duration.ofSeconds(10));
            String queue = "boot-" + UUID.randomUUID();
            assertThat(tasks.register(queue, "t", 1, "p").block(TIMEOUT)).isTrue();
            StepVerifier.create(tasks.capture(queue).take(1).flatMap(c -> tasks.process(c, claim -> Mono.just(claim.payload()))))
                    .expectNext("p")
                    .expectComplete()
                    .verify(TIMEOUT);
            assertThat(tasks.status(queue, "t").block(TIMEOUT).state()).isEqualTo(TaskState.DONE);
            assertThat(tasks.remove(queue, "t").block(TIMEOUT)).isTrue();
        });
        StepVerifier.create(kept.get().register("q", "t", 0)).as("closed with the context")
                .expectError(LockClientClosedException.class).verify(TIMEOUT);
    }

    @Test
    void anApplicationsOwnTaskQueueBeanWins() {
        TaskQueue own = TaskQueue.create(new LocalTaskStore());
        runner().withBean(TaskQueue.class, () -> own).run(context -> assertThat(context.getBean(TaskQueue.class)).isSameAs(own));
    }

    private void assertFree(String name) {

        // the lease was never released by the application: closing the context closed the client, which released it
        RedisClient other = RedisClient.create(server.url());
        try {
            LockStore checkerSession = RedisLocks.connect(other, io.reactivelocks.redis.RedisLockOptions.builder().keyPrefix(prefix).build());
            LockClient checker = checkerSession.locks(io.reactivelocks.LockOptions.defaults());
            try {
                StepVerifier.create(checker.tryAcquire(name).flatMap(l -> l.release().thenReturn(true)))
                        .expectNext(true)
                        .expectComplete()
                        .verify(TIMEOUT);
            } finally {
                checkerSession.close().block(TIMEOUT);
            }
        } finally {
            other.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
