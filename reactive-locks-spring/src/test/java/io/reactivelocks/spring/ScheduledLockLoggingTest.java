package io.reactivelocks.spring;

import io.reactivelocks.test.LogCapture;
import static io.reactivelocks.spring.RedisFixture.STEP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockClient;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import reactor.core.publisher.Mono;

/**
 * What {@link ScheduledLock} jobs log when their lock, not the job, is the trouble: a store outage is the client's one
 * WARN line when it starts and one INFO line when it ends, not a line per trigger; a lease ended by the client's close
 * at shutdown is one WARN line per run naming the job, the lock and the reason; never a stack trace (those are at
 * DEBUG). Real redis-server, paused for the outage; the test reads what is logged.
 */
class ScheduledLockLoggingTest {

    static final Probe OUTAGE_REACTIVE = new Probe();
    static final Probe OUTAGE_BLOCKING = new Probe();
    static final Probe SHUTDOWN_REACTIVE = new Probe();
    static final Probe SHUTDOWN_BLOCKING = new Probe();
    /** Completed by the test: the shutdown jobs' runs end. */
    static final CompletableFuture<Void> FINISH = new CompletableFuture<>();

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static RedisFixture redis;

    @BeforeAll
    static void start() {
        redis = new RedisFixture();
    }

    @AfterAll
    static void stop() {
        FINISH.complete(null);
        redis.close();
    }

    private static AnnotationConfigApplicationContext context(Class<?> jobs, LockClient client) {
        AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext();
        ctx.registerBean("lockClient", LockClient.class, () -> client);
        ctx.register(Scheduling.class, jobs);
        ctx.refresh();
        return ctx;
    }

    /** @return the lines that are part of a stack trace */
    private static List<String> stackTraceLines(List<String> lines) {
        return lines.stream().filter(l -> l.matches("\\s+at .*") || l.startsWith("Caused by:") || l.matches("\\s+\\.\\.\\. \\d+ more")).toList();
    }

    @Test
    void aStoreOutageIsOneWarnLineAndOneInfoLineOfTheClientNotALinePerTrigger() {
        Map<String, AtomicInteger> failedTries = new ConcurrentHashMap<>();
        AnnotationConfigApplicationContext ctx = context(OutageJobs.class,
                countingFailedTries(redis.newClient(Duration.ofMillis(300)), failedTries));
        try {
            await().atMost(WAIT).until(() -> OUTAGE_REACTIVE.invocations.get() >= 1 && OUTAGE_BLOCKING.invocations.get() >= 1);
            try (LogCapture log = new LogCapture()) {
                redis.server.pause();
                try {
                    // several triggers of each job find the store paused
                    await().atMost(WAIT).until(() -> failedTries.getOrDefault("outage-reactive", new AtomicInteger()).get() >= 3
                            && failedTries.getOrDefault("outage-blocking", new AtomicInteger()).get() >= 3);
                } finally {
                    redis.server.resume();
                }
                // the store is back: the jobs run again
                int reactive = OUTAGE_REACTIVE.invocations.get();
                int blocking = OUTAGE_BLOCKING.invocations.get();
                await().atMost(WAIT).until(() -> OUTAGE_REACTIVE.invocations.get() > reactive && OUTAGE_BLOCKING.invocations.get() > blocking
                        && log.count("redis answers again") >= 1);
                List<String> lines = log.lines();
                assertThat(lines).filteredOn(l -> l.contains("redis is unreachable")).singleElement()
                        .satisfies(l -> assertThat(l).contains("WARN", "io.reactivelocks.outage"));
                assertThat(lines).filteredOn(l -> l.contains("redis answers again")).singleElement()
                        .satisfies(l -> assertThat(l).contains("INFO", "io.reactivelocks.outage"));
                assertThat(lines).as("no line per trigger").noneMatch(l -> l.contains("could not try lock"));
                assertThat(stackTraceLines(lines)).as("no stack trace at WARN or above").isEmpty();
                assertThat(lines).noneMatch(l -> l.contains("Unexpected error occurred in scheduled"));
            }
        } finally {
            ctx.close();
        }
    }

    /** @return {@code client}, counting per lock name the {@code tryAcquire}s that fail */
    private static LockClient countingFailedTries(LockClient client, Map<String, AtomicInteger> failures) {
        return (LockClient) Proxy.newProxyInstance(LockClient.class.getClassLoader(), new Class<?>[] {LockClient.class},
                (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(client, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (method.getName().equals("tryAcquire") && result instanceof Mono<?> attempt) {
                        String name = (String) args[0];
                        return attempt.doOnError(e -> failures.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet());
                    }
                    return result;
                });
    }

    @Test
    void runsWhoseLeaseTheClientReleasedAtShutdownEndWithOneLineEachAndNoStackTrace() {
        LockClient client = redis.newClient();
        AnnotationConfigApplicationContext ctx = context(ShutdownJobs.class, client);
        try (LogCapture log = new LogCapture()) {
            await().atMost(WAIT).until(() -> SHUTDOWN_REACTIVE.inside.get() == 1 && SHUTDOWN_BLOCKING.inside.get() == 1);
            // what the starter does when the context stops: the client is closed (its leases released) while jobs still run
            client.close().block(STEP);
            FINISH.complete(null);
            await().atMost(WAIT).until(() -> log.count("lock 'shutdown-reactive' (token") >= 1
                    && log.count("lock 'shutdown-blocking' (token") >= 1);
            ctx.close();
            List<String> lines = log.lines();
            assertThat(lines).filteredOn(l -> l.contains("lock 'shutdown-reactive' (token")).singleElement().satisfies(l -> assertThat(l)
                    .contains("WARN", "ScheduledLockLoggingTest$ShutdownJobs.reactive()", "was no longer held when the run ended"));
            assertThat(lines).filteredOn(l -> l.contains("lock 'shutdown-blocking' (token")).singleElement().satisfies(l -> assertThat(l)
                    .contains("WARN", "ScheduledLockLoggingTest$ShutdownJobs.blocking()", "was no longer held when the run ended"));
            assertThat(stackTraceLines(lines)).as("no stack trace at WARN or above").isEmpty();
            assertThat(lines).noneMatch(l -> l.contains("LockLostException"));
        } finally {
            ctx.close();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableReactiveLocking
    static class Scheduling {

        @Bean(destroyMethod = "destroy")
        TaskScheduler taskScheduler() {
            ThreadPoolTaskScheduler s = new ThreadPoolTaskScheduler();
            s.setPoolSize(4);
            s.setThreadNamePrefix("jobs-");
            return s;
        }
    }

    /** Two jobs that run briefly, every 50 ms. */
    public static class OutageJobs {

        @Scheduled(fixedDelay = 50)
        @ScheduledLock(name = "outage-reactive", lockAtMostFor = "5s")
        public Mono<Void> reactive() {
            return Mono.fromRunnable(OUTAGE_REACTIVE.invocations::incrementAndGet);
        }

        @Scheduled(fixedDelay = 50)
        @ScheduledLock(name = "outage-blocking", lockAtMostFor = "5s")
        public void blocking() {
            OUTAGE_BLOCKING.invocations.incrementAndGet();
        }
    }

    /** Two jobs whose runs last until the test says. */
    public static class ShutdownJobs {

        @Scheduled(fixedDelay = 50)
        @ScheduledLock(name = "shutdown-reactive", lockAtMostFor = "30s")
        public Mono<Void> reactive() {
            return Mono.fromRunnable(() -> SHUTDOWN_REACTIVE.enter("a", 0))
                    .then(Mono.fromCompletionStage(FINISH))
                    .doFinally(s -> SHUTDOWN_REACTIVE.exit());
        }

        @Scheduled(fixedDelay = 50)
        @ScheduledLock(name = "shutdown-blocking", lockAtMostFor = "30s")
        public void blocking() throws Exception {
            SHUTDOWN_BLOCKING.enter("a", 0);
            try {
                FINISH.get(30, TimeUnit.SECONDS);
            } finally {
                SHUTDOWN_BLOCKING.exit();
            }
        }
    }
}
