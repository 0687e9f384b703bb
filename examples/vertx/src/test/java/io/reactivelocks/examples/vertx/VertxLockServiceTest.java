package io.reactivelocks.examples.vertx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.test.server.RedisServer;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two {@link VertxLockService} instances (two {@link Vertx} instances, each with its own Redis
 * client and lock client) against a real redis-server. Vert.x's blocked-thread checker looks every
 * 100 ms for an event loop busy for more than 200 ms, and its warnings are captured
 * ({@link CapturingLogDelegateFactory}): after each test there must be none, and no other Vert.x
 * warning or error. BlockHound watches the event loops as well.
 */
class VertxLockServiceTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    /**
     * The bound of the throwaway warm-up instance (see {@link #warmUp()}): the first class loading and linking in
     * the JVM, which no test measures; a loaded 2-core run (s39: the safety harness's fault runs and a CPU hog beside
     * this module) took longer than {@link #STEP} to deploy it.
     */
    private static final Duration WARM_UP = Duration.ofSeconds(60);
    /** Above Vert.x's own shutdown bounds (10 s for the event loops, 10 s for virtual threads). */
    private static final Duration CLOSE = Duration.ofSeconds(30);
    private static final Duration PERIOD = Duration.ofMillis(300);
    private static final Duration LEASE = Duration.ofSeconds(1);

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(STEP).build();

    private static RedisServer redis;

    private final List<Instance> instances = new ArrayList<>();
    private final Queue<Throwable> unhandled = new ConcurrentLinkedQueue<>();
    private String job;
    private String leaderLock;

    @BeforeAll
    static void startServer() throws Exception {
        redis = RedisServer.start();
        warmUp();
    }

    /*
     * One throwaway instance, with Vert.x's default limits, before the measured ones: the first
     * HTTP server, Redis connection and lock calls in a JVM load classes and link lambdas — CPU work
     * that took 250-400 ms on an event loop of this 2-core machine under load from other builds,
     * which is JVM warm-up, not blocking. The tests then measure the service with a 200 ms limit;
     * BlockHound reports any blocking call whatever its duration, warm-up included.
     */
    private static void warmUp() throws Exception {
        Vertx vertx = Vertx.vertx();
        RedisURI uri = RedisURI.create(redis.url());
        uri.setTimeout(STEP);
        RedisClient client = RedisClient.create(uri);
        try {
            String id = UUID.randomUUID().toString().substring(0, 8);
            VertxLockService service = new VertxLockService(client, uri, ServiceOptions.defaults("warm-up")
                    .withNames("warm-up-job-" + id, "warm-up-leader-" + id)
                    .withPeriod(PERIOD).withLeaseTime(LEASE).withHttpPort(0), claim -> { });
            long t0 = System.nanoTime();
            String deployment = join(vertx.deployVerticle(service), WARM_UP);
            await().atMost(WARM_UP).until(() -> service.isLeader() && service.runs() > 0);
            assertThat(status(service).getBoolean("leader")).isTrue();
            join(vertx.undeploy(deployment), WARM_UP);
            System.out.printf("warm-up instance: deployed, led and undeployed in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        } finally {
            join(vertx.close());
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            CapturingLogDelegateFactory.drain();
        }
    }

    @AfterAll
    static void stopServer() {
        if (redis != null) {
            redis.close();
        }
    }

    @BeforeEach
    void names() {
        String id = UUID.randomUUID().toString().substring(0, 8);
        job = "job-" + id;
        leaderLock = "leader-" + id;
        CapturingLogDelegateFactory.drain();
    }

    @AfterEach
    void stopInstancesAndCheckTheEventLoops() throws Exception {
        for (Instance i : instances) {
            i.close();
        }
        assertThat(CapturingLogDelegateFactory.drain()).as("Vert.x warnings and errors (blocked threads among them)").isEmpty();
        assertThat(unhandled).as("exceptions unhandled on an event loop (BlockHound reports among them)").isEmpty();
        for (Instance i : instances) {
            assertThat(i.service.errors()).as("failed claims and hold streams of " + i.service.options().instance()).isZero();
        }
    }

    /** One service instance on its own Vert.x and Redis client. */
    private final class Instance {
        final Vertx vertx;
        final RedisClient client;
        final VertxLockService service;
        String deployment;

        Instance(String name, Handler<WindowClaim> work) throws Exception {
            vertx = Vertx.vertx(new VertxOptions()
                    .setEventLoopPoolSize(2)
                    .setBlockedThreadCheckInterval(100)
                    .setBlockedThreadCheckIntervalUnit(TimeUnit.MILLISECONDS)
                    .setMaxEventLoopExecuteTime(200)
                    .setMaxEventLoopExecuteTimeUnit(TimeUnit.MILLISECONDS)
                    .setWarningExceptionTime(150) // with the blocked thread's stack
                    .setWarningExceptionTimeUnit(TimeUnit.MILLISECONDS));
            vertx.exceptionHandler(unhandled::add);
            RedisURI uri = RedisURI.create(redis.url());
            uri.setTimeout(STEP);
            client = RedisClient.create(uri);
            ServiceOptions options = ServiceOptions.defaults(name)
                    .withNames(job, leaderLock)
                    .withPeriod(PERIOD)
                    .withLeaseTime(LEASE)
                    .withHttpPort(0);
            service = new VertxLockService(client, uri, options, work);
            deployment = join(vertx.deployVerticle(service));
        }

        /** Undeploys the service (releasing leadership): the instance stops, Vert.x keeps running. */
        void stop() throws Exception {
            if (deployment != null) {
                String id = deployment;
                deployment = null;
                join(vertx.undeploy(id));
            }
        }

        void close() throws Exception {
            try {
                stop();
                closeVertx(vertx);
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }

        JsonObject status() throws Exception {
            return VertxLockServiceTest.status(service);
        }
    }

    /** {@code GET /status}, from the test thread. */
    private static JsonObject status(VertxLockService service) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.httpPort() + "/status"))
                .timeout(STEP).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return new JsonObject(r.body());
    }

    private Instance start(String name, Handler<WindowClaim> work) throws Exception {
        Instance i = new Instance(name, work);
        instances.add(i);
        return i;
    }

    private Instance start(String name) throws Exception {
        return start(name, claim -> { });
    }

    /**
     * Closes a Vert.x instance, bounded by {@link #CLOSE}: Vert.x itself gives its event loops and
     * its virtual-thread executor up to 10 s each to finish, so the bound of one step raced with it
     * on a loaded machine. A close that still does not finish fails with the Vert.x threads' stacks.
     */
    private static void closeVertx(Vertx vertx) throws Exception {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(CLOSE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            StringBuilder stacks = new StringBuilder("Vert.x did not close within " + CLOSE + "; its threads:\n");
            Thread.getAllStackTraces().forEach((t, frames) -> {
                if (t.getName().startsWith("vert.x-")) {
                    stacks.append(t.getName()).append(' ').append(t.getState()).append('\n');
                    for (StackTraceElement f : frames) {
                        stacks.append("    at ").append(f).append('\n');
                    }
                }
            });
            throw new AssertionError(stacks.toString(), e);
        }
    }

    /** Waits on a test thread (never an event loop) for a Vert.x future, bounded. */
    private static <T> T join(Future<T> f) throws Exception {
        return join(f, STEP);
    }

    /** Waits on a test thread for a Vert.x future, at most {@code bound}. */
    private static <T> T join(Future<T> f, Duration bound) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(bound.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static long leaders(Instance... all) {
        long n = 0;
        for (Instance i : all) {
            n += i.service.isLeader() ? 1 : 0;
        }
        return n;
    }

    @Test
    void theJobRunsExactlyOncePerWindowAcrossBothInstances() throws Exception {
        Map<Long, Queue<String>> runsByWindow = new ConcurrentHashMap<>();
        Instance a = start("a", claim -> runsByWindow.computeIfAbsent(claim.window(), w -> new ConcurrentLinkedQueue<>()).add("a"));
        Instance b = start("b", claim -> runsByWindow.computeIfAbsent(claim.window(), w -> new ConcurrentLinkedQueue<>()).add("b"));

        await().atMost(Duration.ofSeconds(15)).until(() -> runsByWindow.size() >= 10);
        a.stop();
        b.stop();

        assertThat(runsByWindow).allSatisfy((window, ran) -> assertThat(ran).as("runs in window " + window).hasSize(1));
        assertThat(a.service.runs() + b.service.runs()).isEqualTo(runsByWindow.size());
        long first = runsByWindow.keySet().stream().mapToLong(Long::longValue).min().orElseThrow();
        long last = runsByWindow.keySet().stream().mapToLong(Long::longValue).max().orElseThrow();
        // each instance tries every period/4: a window goes without a run only if both stalled for 3/4 of it
        assertThat(runsByWindow.size()).as("windows run out of " + (last - first + 1)).isGreaterThanOrEqualTo((int) ((last - first + 1) * 8 / 10));
    }

    @Test
    void oneLeaderAtATimeAndTheOtherTakesOverWhenTheLeaderStops() throws Exception {
        Instance a = start("a");
        Instance b = start("b");

        await().atMost(STEP).until(() -> leaders(a, b) == 1);
        // stays exactly one over several renewals (lease 1 s, renewed every 333 ms)
        await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3)).until(() -> leaders(a, b) == 1);
        Instance leader = a.service.isLeader() ? a : b;
        Instance follower = leader == a ? b : a;
        assertThat(leader.status().getBoolean("leader")).isTrue();
        assertThat(follower.status().getBoolean("leader")).isFalse();
        assertThat(follower.status().getString("instance")).isEqualTo(follower.service.options().instance());

        leader.stop();
        assertThat(leader.service.isLeader()).isFalse();
        // stop released the lease, so the follower is woken at once; the bound is the lease time plus slack
        await().atMost(LEASE.plusSeconds(2)).until(follower.service::isLeader);
        await().during(Duration.ofMillis(700)).atMost(Duration.ofSeconds(2)).until(() -> follower.service.isLeader() && !leader.service.isLeader());
        assertThat(follower.status().getBoolean("leader")).isTrue();
    }

    @Test
    void aResigningLeaderHandsOverAndCampaignsAgain() throws Exception {
        Instance a = start("a");
        await().atMost(STEP).until(a.service::isLeader);
        Instance b = start("b");
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> a.service.isLeader() && !b.service.isLeader());

        join(a.service.resign());
        await().atMost(LEASE.plusSeconds(2)).until(b.service::isLeader);
        assertThat(a.service.isLeader()).isFalse();

        b.stop(); // a campaigns again and takes over
        await().atMost(LEASE.plusSeconds(2)).until(a.service::isLeader);
    }

    @Test
    void theStatusEndpointCountsRuns() throws Exception {
        Instance a = start("solo");
        await().atMost(STEP).until(() -> a.service.runs() >= 3 && a.service.isLeader());
        JsonObject status = a.status();
        assertThat(status.getString("instance")).isEqualTo("solo");
        assertThat(status.getBoolean("leader")).isTrue();
        assertThat(status.getLong("runs")).isGreaterThanOrEqualTo(3);
    }

    @Test
    void theBlockedThreadWarningsAreReallyCaptured() throws Exception {
        // the check the other tests rely on: busy an event loop for 500 ms (no sleep) and see the warning
        Vertx vertx = Vertx.vertx(new VertxOptions()
                .setBlockedThreadCheckInterval(100)
                .setBlockedThreadCheckIntervalUnit(TimeUnit.MILLISECONDS)
                .setMaxEventLoopExecuteTime(200)
                .setMaxEventLoopExecuteTimeUnit(TimeUnit.MILLISECONDS));
        try {
            vertx.runOnContext(ignored -> {
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
                long spins = 0;
                while (System.nanoTime() < end) {
                    spins++;
                }
                assertThat(spins).isPositive();
            });
            List<String> seen = new ArrayList<>();
            await().atMost(STEP).until(() -> {
                seen.addAll(CapturingLogDelegateFactory.drain());
                return seen.stream().anyMatch(s -> s.contains("has been blocked"));
            });
        } finally {
            closeVertx(vertx);
            CapturingLogDelegateFactory.drain();
        }
    }
}
