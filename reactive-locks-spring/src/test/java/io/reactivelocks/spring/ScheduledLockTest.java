package io.reactivelocks.spring;

import static io.reactivelocks.spring.RedisFixture.STEP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockClient;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link ScheduledLock} on {@code @Scheduled} methods of two real application contexts (two instances of
 * one service, each with its own lock client, window lock and scheduler) over one real redis-server. The
 * jobs run from the start of the class; each test waits (bounded) for enough runs and checks them.
 */
class ScheduledLockTest {

    static final Probe WINDOWED = new Probe();
    static final Probe EXCLUSIVE = new Probe();
    static final Probe BOUNDED = new Probe();
    static final Probe BLOCKING = new Probe();
    static final Probe BLOCKING_BOUNDED = new Probe();

    /** Long enough for a loaded build machine: the jobs tick every 40 to 100 ms, windows are 1 s. */
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static RedisFixture redis;
    private static AnnotationConfigApplicationContext a;
    private static AnnotationConfigApplicationContext b;

    @BeforeAll
    static void start() {
        redis = new RedisFixture();
        a = instance("a", "50");
        b = instance("b", "57");
    }

    @AfterAll
    static void stop() {
        try {
            for (AnnotationConfigApplicationContext c : new AnnotationConfigApplicationContext[] {a, b}) {
                if (c != null) {
                    c.close();
                }
            }
            // the contexts cancelled the runs in progress: every lease was released
            await().atMost(STEP).until(() -> redis.lockKeys().isEmpty());
        } finally {
            redis.close();
        }
    }

    private static AnnotationConfigApplicationContext instance(String name, String exclusiveRate) {
        AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext();
        // the two instances tick at slightly different rates, so that each one wins the exclusive job now and then
        ctx.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test",
                Map.of("instance", name, "exclusive.rate", exclusiveRate, "report.window", "1s")));
        LockClient client = redis.newClient();
        WindowLock windows = redis.newWindowLock();
        ctx.registerBean("lockClient", LockClient.class, () -> client);
        ctx.registerBean("windowLock", WindowLock.class, () -> windows);
        ctx.register(Instance.class);
        ctx.refresh();
        return ctx;
    }

    @Test
    void aWindowedJobRunsAtMostOncePerWindowAcrossBothInstancesAndNeverConcurrently() {
        await().atMost(WAIT).until(() -> WINDOWED.windows.size() >= 3);
        List<Long> windows = List.copyOf(WINDOWED.windows);
        assertThat(windows).as("one run per window, windows in order").isSorted().doesNotHaveDuplicates();
        assertThat(WINDOWED.maxInside.get()).isEqualTo(1);
        assertThat(WINDOWED.tokens).as("each run under its own fenced lease").isSorted().doesNotHaveDuplicates();
    }

    @Test
    void anExclusiveJobNeverRunsOnBothInstancesAtOnce() {
        await().atMost(WAIT).until(() -> EXCLUSIVE.tokens.size() >= 10 && EXCLUSIVE.instances.containsAll(List.of("a", "b")));
        assertThat(EXCLUSIVE.maxInside.get()).as("never two runs at once").isEqualTo(1);
        assertThat(List.copyOf(EXCLUSIVE.tokens)).as("tokens grow run after run").isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aRunPastLockAtMostForIsCancelledAndTheLockReleased() {
        // every run hangs: each is cancelled at 200 ms, and the next tick (on either instance) gets the lock again
        await().atMost(WAIT).until(() -> BOUNDED.cancelled.get() >= 3);
        assertThat(BOUNDED.maxInside.get()).isEqualTo(1);
        assertThat(List.copyOf(BOUNDED.tokens)).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void blockingVoidJobsAreExclusiveAndInterruptedPastLockAtMostFor() {
        await().atMost(WAIT).until(() -> BLOCKING.invocations.get() >= 6 && BLOCKING.instances.containsAll(List.of("a", "b")));
        assertThat(BLOCKING.maxInside.get()).as("never two blocking runs at once").isEqualTo(1);
        // a blocking run that waits for 5 s is interrupted at 200 ms, and the next run gets the lock
        await().atMost(WAIT).until(() -> BLOCKING_BOUNDED.interrupted.get() >= 2);
        assertThat(BLOCKING_BOUNDED.maxInside.get()).isEqualTo(1);
    }

    @Test
    void aScheduledLockOnAMethodThatReturnsAValueIsRefusedAtStartup() {
        assertThatThrownBy(() -> {
            try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
                ctx.register(LockedTest.Enable.class);
                ctx.registerBean(NotAJob.class);
                ctx.refresh();
            }
        }).hasStackTraceContaining("@ScheduledLock method io.reactivelocks.spring.ScheduledLockTest$NotAJob.count()")
                .hasStackTraceContaining("returns java.lang.String");
    }

    public static class NotAJob {
        @ScheduledLock(name = "x", lockAtMostFor = "1s")
        public String count() {
            return "";
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableReactiveLocking
    static class Instance {

        @Bean(destroyMethod = "destroy")
        TaskScheduler taskScheduler() {
            ThreadPoolTaskScheduler s = new ThreadPoolTaskScheduler();
            s.setPoolSize(4);
            s.setThreadNamePrefix("jobs-");
            return s;
        }

        @Bean
        Jobs jobs(@Value("${instance}") String instance) {
            return new Jobs(instance);
        }
    }

    /** The jobs of one instance. */
    public static class Jobs {
        private final String instance;

        Jobs(String instance) {
            this.instance = instance;
        }

        @Scheduled(fixedRate = 100)
        @ScheduledLock(name = "report", lockAtMostFor = "5s", lockAtLeastFor = "${report.window}")
        public Mono<Void> windowed() {
            return Mono.zip(LockedContext.lease(), LockedContext.windowClaim()).flatMap(t -> {
                WINDOWED.invocations.incrementAndGet();
                WINDOWED.enter(instance, t.getT1().token());
                WINDOWED.windows.add(t.getT2().window());
                return Mono.delay(Duration.ofMillis(20)).then(Mono.fromRunnable(WINDOWED::exit));
            });
        }

        @Scheduled(fixedRateString = "${exclusive.rate}")
        @ScheduledLock(name = "exclusive", lockAtMostFor = "PT5S")
        public Flux<Long> exclusive() {
            return LockedContext.lease().flatMapMany(lease -> Mono.fromRunnable(() -> EXCLUSIVE.enter(instance, lease.token()))
                    .thenMany(Flux.interval(Duration.ofMillis(10)).take(3))
                    .concatWith(Mono.fromRunnable(EXCLUSIVE::exit)));
        }

        @Scheduled(fixedRate = 100)
        @ScheduledLock(name = "bounded", lockAtMostFor = "200ms")
        public Mono<Void> bounded() {
            return LockedContext.lease().flatMap(lease -> Mono.fromRunnable(() -> BOUNDED.enter(instance, lease.token()))
                    .then(Mono.<Void>never())
                    .doOnCancel(() -> {
                        BOUNDED.exit();
                        BOUNDED.cancelled.incrementAndGet();
                    }));
        }

        @Scheduled(fixedDelay = 40)
        @ScheduledLock(name = "blocking", lockAtMostFor = "5s")
        public void blocking() throws InterruptedException {
            BLOCKING.invocations.incrementAndGet();
            BLOCKING.enter(instance, 0);
            try {
                new CountDownLatch(1).await(20, TimeUnit.MILLISECONDS); // the run's work
            } finally {
                BLOCKING.exit();
            }
        }

        @Scheduled(fixedDelay = 100)
        @ScheduledLock(name = "blocking-bounded", lockAtMostFor = "200ms")
        public void blockingBounded() {
            BLOCKING_BOUNDED.enter(instance, 0);
            try {
                new CountDownLatch(1).await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                BLOCKING_BOUNDED.interrupted.incrementAndGet();
            } finally {
                BLOCKING_BOUNDED.exit();
            }
        }
    }
}
