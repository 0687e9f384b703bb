package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.reactivelocks.spring.Locked;
import io.reactivelocks.spring.ScheduledLock;
import io.reactivelocks.test.LogCapture;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A store outage, measured in a real application: a Spring Boot WebFlux service (Reactor Netty on a random port) on
 * the auto-configured Redis lock client, with two {@code @ScheduledLock} jobs every 300 ms and four requests to a
 * {@code @Locked} endpoint in flight at all times, while the test pauses redis-server (every request hangs) and resumes
 * it. What it logs at WARN or above, counted across every logger, stack trace lines included, from the pause until
 * jobs and requests succeed again: at most ten lines — one WARN when the store becomes unreachable, one INFO when it
 * answers again, no stack trace, no release warning for a lock never held.
 *
 * <p>The pause is {@value #DEFAULT_PAUSE} by default (longer than every timeout of the application, so requests and
 * runs fail while it lasts); {@code -Doutage.pause=46s} runs the longer measurement of the operations page.
 */
class QuietOutageTest {

    static final String DEFAULT_PAUSE = "6s";
    /** At most this many lines at WARN or above for the whole outage. */
    static final int MAX_LINES = 10;

    private static final Duration PAUSE = DurationStyle.detectAndParse(System.getProperty("outage.pause", DEFAULT_PAUSE));
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** A log line of slf4j-simple, the test JVM's binding: {@code [thread] LEVEL logger - message}. */
    private static final Pattern LOG_LINE = Pattern.compile("^\\[[^\\]]*\\] (TRACE|DEBUG|INFO|WARN|ERROR) ");
    private static final Pattern STACK_TRACE_LINE = Pattern.compile("^(\\s+at .*|Caused by: .*|\\s+\\.\\.\\. \\d+ more|\\s*Suppressed: .*)$");

    private static RedisServer redis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        redis.close();
    }

    private static ConfigurableApplicationContext application() {
        String prefix = "quiet-outage:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        return new SpringApplicationBuilder(Service.class)
                .web(WebApplicationType.REACTIVE)
                .run("--server.port=0",
                        "--spring.main.banner-mode=off",
                        "--spring.task.scheduling.pool.size=2",
                        "--reactive-locks.backend=redis",
                        "--reactive-locks.redis.key-prefix=" + prefix,
                        "--reactive-locks.lease-time=4s",
                        "--reactive-locks.request-timeout=1s",
                        "--reactive-locks.wait-timeout=2s",
                        "--reactive-locks.health.timeout=1s",
                        "--reactive-locks.shutdown-timeout=5s");
    }

    @Test
    void anOutageWithJobsAndRequestsInFlightLogsAtMostTenLinesAtWarnOrAbove() {
        ConfigurableApplicationContext app = application();
        Disposable load = null;
        try {
            Jobs jobs = app.getBean(Jobs.class);
            ReactiveHealthIndicator health = app.getBean("reactiveLocksHealthIndicator", ReactiveHealthIndicator.class);
            WebClient http = WebClient.create("http://localhost:" + app.getEnvironment().getProperty("local.server.port"));
            ConcurrentLinkedQueue<Integer> statuses = new ConcurrentLinkedQueue<>();
            AtomicInteger ok = new AtomicInteger();
            // four requests in flight at all times: each loop sends the next one when the last has its answer
            load = Flux.range(0, 4)
                    .flatMap(i -> Mono.defer(() -> http.get().uri("/work").exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value())))
                            .onErrorReturn(-1)
                            .doOnNext(status -> {
                                statuses.add(status);
                                if (status == 200) {
                                    ok.incrementAndGet();
                                }
                            })
                            .repeat(), 4)
                    .subscribe();
            // started and warmed up: the first connection and the first requests are slow on a loaded machine
            await().atMost(WAIT.multipliedBy(2)).until(() -> ok.get() >= 4 && jobs.reactiveRuns() >= 2 && jobs.blockingRuns() >= 2);

            List<String> lines;
            try (LogCapture log = new LogCapture()) {
                redis.pause();
                Health down;
                try {
                    // the pause outlasts every timeout: requests and runs fail while it lasts
                    long paused = System.nanoTime();
                    await().atMost(WAIT).until(() -> log.count("is unreachable") >= 1);
                    down = health.health().block(WAIT);
                    // the outage itself: the store stays paused for the whole measured period
                    Duration left = PAUSE.minusNanos(System.nanoTime() - paused);
                    if (!left.isNegative()) {
                        Mono.delay(left).block(left.plus(WAIT));
                    }
                } finally {
                    redis.resume();
                }
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                assertThat(down.getDetails()).containsEntry("error", "redis did not answer within 1 s")
                        .containsEntry("backend", "redis").containsKey("since");

                // recovered: the store answers, both jobs run, requests succeed
                int reactive = jobs.reactiveRuns();
                int blocking = jobs.blockingRuns();
                int served = ok.get();
                await().atMost(WAIT).until(() -> log.count("answers again") >= 1 && jobs.reactiveRuns() > reactive + 1
                        && jobs.blockingRuns() > blocking + 1 && ok.get() > served + 4);
                assertThat(health.health().block(WAIT).getStatus()).isEqualTo(Status.UP);
                lines = log.lines();
            }
            List<String> loud = warnOrAbove(lines);
            System.out.printf("%d line(s) at WARN or above during a %s outage%n", loud.size(), PAUSE);
            assertThat(loud).as("lines at WARN or above during a %s outage", PAUSE).hasSizeLessThanOrEqualTo(MAX_LINES);
            assertThat(loud).filteredOn(l -> l.contains(" WARN ") && l.contains("redis is unreachable")).hasSize(1);
            assertThat(lines).filteredOn(l -> l.contains(" INFO ") && l.contains("redis answers again")).hasSize(1);
            assertThat(loud).noneMatch(l -> STACK_TRACE_LINE.matcher(l).matches());
            assertThat(loud).noneMatch(l -> l.contains("could not release"));
            assertThat(statuses).as("requests failed while the store was paused").contains(503)
                    .as("a request the lock failed is answered 503, not 500").containsOnly(200, 503);
        } finally {
            if (load != null) {
                load.dispose();
            }
            app.close();
        }
    }

    /**
     * @return the lines at WARN or above: each such log line and every line after it up to the next log line (its
     *     stack trace), and any stack trace line written without a log line
     */
    static List<String> warnOrAbove(List<String> lines) {
        List<String> loud = new ArrayList<>();
        boolean inLoud = false;
        for (String line : lines) {
            Matcher m = LOG_LINE.matcher(line);
            if (m.find()) {
                inLoud = m.group(1).equals("WARN") || m.group(1).equals("ERROR");
            } else if (line.isBlank()) {
                continue;
            }
            if (inLoud || STACK_TRACE_LINE.matcher(line).matches()) {
                loud.add(line);
            }
        }
        return loud;
    }

    /** The service: a {@code @Locked} endpoint and two {@code @ScheduledLock} jobs on the auto-configured client. */
    @SpringBootConfiguration
    @EnableAutoConfiguration(excludeName = "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration")
    @EnableScheduling
    @Import({Jobs.class, Work.class})
    static class Service {

        @Bean(destroyMethod = "shutdown")
        RedisClient redisClient() {
            return RedisClient.create(redis.url());
        }
    }

    /** Two jobs every 300 ms, one reactive (its run takes 100 ms), one blocking. */
    public static class Jobs {

        private final AtomicInteger reactiveRuns = new AtomicInteger();
        private final AtomicInteger blockingRuns = new AtomicInteger();

        /** @return how many times {@link #reactive()} ran (public: the bean is a proxy, its fields are not the job's) */
        public int reactiveRuns() {
            return reactiveRuns.get();
        }

        /** @return how many times {@link #blocking()} ran */
        public int blockingRuns() {
            return blockingRuns.get();
        }

        /** @return the run: 100 ms under the lock */
        @Scheduled(fixedDelay = 300)
        @ScheduledLock(name = "quiet-outage-reactive", lockAtMostFor = "20s")
        public Mono<Void> reactive() {
            return Mono.delay(Duration.ofMillis(100)).then(Mono.fromRunnable(reactiveRuns::incrementAndGet));
        }

        /** A short blocking run. */
        @Scheduled(fixedDelay = 300)
        @ScheduledLock(name = "quiet-outage-blocking", lockAtMostFor = "20s")
        public void blocking() {
            blockingRuns.incrementAndGet();
        }
    }

    /** One endpoint whose work (50 ms) runs under one lock: concurrent requests wait for it in turn. */
    @RestController
    public static class Work {

        /** @return "done", once the work ran under the lock */
        @GetMapping("/work")
        @Locked("quiet-outage-work")
        public Mono<String> work() {
            return Mono.delay(Duration.ofMillis(50)).thenReturn("done");
        }
    }
}
