package io.reactivelocks.vertx.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.server.ZooKeeperServer;
import io.reactivelocks.vertx.LockStream;
import io.reactivelocks.vertx.VertxLocks;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.Lock;
import io.vertx.spi.cluster.zookeeper.ZookeeperClusterManager;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * Two clustered Vert.x instances on a real ZooKeeper (Vert.x's {@link ZookeeperClusterManager}),
 * each with a lock client on its cluster manager's Curator ({@link VertxZooKeeperLocks}), beside
 * Vert.x's own cluster-wide lock ({@code sharedData().getLockWithTimeout}) on the same cluster
 * managers: how many threads waiters take, whether a loss is signalled, what a cancelled waiter
 * leaves in ZooKeeper. The figures are printed for the record and asserted.
 */
class VertxZooKeeperLocksTest {

    private static final int WAITERS = 50;
    private static final int WORKER_POOL = 20;
    private static final Duration STEP = Duration.ofSeconds(15);
    /** The ZooKeeper session of each cluster manager: the lease time of every lock here. */
    private static final int SESSION_MS = 4_000;

    private static ZooKeeperServer zk;
    private static final String ID = UUID.randomUUID().toString().substring(0, 8);
    private static final ZooKeeperLockOptions ZK_OPTIONS = ZooKeeperLockOptions.builder().root("/rl-" + ID).build();
    private static final Queue<Throwable> UNHANDLED = new ConcurrentLinkedQueue<>();
    private static ZookeeperClusterManager clusterA;
    private static ZookeeperClusterManager clusterB;
    private static Vertx vertxA;
    private static Vertx vertxB;
    private static LockStore storeA;
    private static LockStore storeB;
    private static LockClient clientA;
    private static LockClient clientB;

    private VertxLocks locksA;
    private VertxLocks locksB;
    private Context a;
    private Context b;
    private String name;

    @BeforeAll
    static void start() throws Exception {
        zk = ZooKeeperServer.start();
        clusterA = clusterManager();
        clusterB = clusterManager();
        Future<Vertx> startingA = Vertx.builder().with(options()).withClusterManager(clusterA).buildClustered();
        Future<Vertx> startingB = Vertx.builder().with(options()).withClusterManager(clusterB).buildClustered();
        vertxA = join(startingA);
        vertxB = join(startingB);
        vertxA.exceptionHandler(UNHANDLED::add);
        vertxB.exceptionHandler(UNHANDLED::add);
        LockOptions options = LockOptions.builder().waitTimeout(Duration.ofSeconds(20)).build();
        // made on this test thread, as an application makes them at start-up
        storeA = VertxZooKeeperLocks.connect(clusterA, ZK_OPTIONS);
        storeB = VertxZooKeeperLocks.connect(clusterB, ZK_OPTIONS);
        clientA = storeA.locks(options);
        clientB = storeB.locks(options);
        warmUp();
    }

    private static ZookeeperClusterManager clusterManager() {
        return new ZookeeperClusterManager(new JsonObject()
                .put("zookeeperHosts", zk.connectString())
                .put("rootPath", "rltest-vertx-" + ID)
                .put("sessionTimeout", SESSION_MS)
                .put("connectTimeout", 3_000)
                .put("retry", new JsonObject().put("initialSleepTime", 100).put("intervalTimes", 1_000).put("maxTimes", 3)));
    }

    private static VertxOptions options() {
        return new VertxOptions()
                .setWorkerPoolSize(WORKER_POOL)
                .setEventLoopPoolSize(2)
                .setEventBusOptions(new EventBusOptions().setHost("127.0.0.1").setPort(0));
    }

    /** The first calls of each kind load classes: once, off the measured figures. */
    private static void warmUp() throws Exception {
        String warm = "warm-up-" + ID;
        clientA.withLock(warm, lease -> Mono.just(lease.token())).block(STEP);
        clientB.hold(warm).take(1).blockLast(STEP);
        clientB.observe(warm).take(1).blockLast(STEP);
        VertxLocks l = VertxLocks.create(vertxB, clientB);
        Context ctx = vertxB.getOrCreateContext();
        call(ctx, () -> l.withLock(warm, lease -> Future.succeededFuture(lease.token())));
        Lock lock = call(ctx, () -> vertxB.sharedData().getLockWithTimeout(warm, 10_000));
        lock.release();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            for (LockStore c : Arrays.asList(storeA, storeB)) {
                if (c != null) {
                    c.close().block(STEP);
                }
            }
            List<Future<Void>> closing = new ArrayList<>();
            for (Vertx v : Arrays.asList(vertxA, vertxB)) {
                if (v != null) {
                    closing.add(v.close());
                }
            }
            long t0 = System.nanoTime();
            try {
                Future.join(closing).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
                System.out.printf("clustered Vert.x instances closed in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
            } catch (java.util.concurrent.TimeoutException e) {
                // Seen now and then with vertx-zookeeper 5.0.7: both cluster managers have left (their ZooKeeper
                // sessions are closed) and every Vert.x thread is idle, yet one close future never completes.
                // Not what these tests are about: note it and let the JVM end.
                System.out.println("a clustered Vert.x did not report its close within 10 s: " + closing);
            }
        } finally {
            if (zk != null) {
                zk.close();
            }
        }
    }

    @BeforeEach
    void setUp() {
        locksA = VertxLocks.create(vertxA, clientA);
        locksB = VertxLocks.create(vertxB, clientB);
        a = vertxA.getOrCreateContext();
        b = vertxB.getOrCreateContext();
        name = "lock-" + UUID.randomUUID();
    }

    // ---- helpers (test thread only) ----

    private static <T> T call(Context context, Supplier<? extends Future<T>> op) throws Exception {
        CompletableFuture<T> out = new CompletableFuture<>();
        context.runOnContext(v -> op.get().onComplete(ar -> {
            if (Vertx.currentContext() != context) {
                out.completeExceptionally(new AssertionError("completed on " + Vertx.currentContext() + " instead of " + context));
            } else if (ar.succeeded()) {
                out.complete(ar.result());
            } else {
                out.completeExceptionally(ar.cause());
            }
        }));
        return join(out);
    }

    private static <T> T join(Future<T> f) throws Exception {
        return join(f.toCompletionStage().toCompletableFuture());
    }

    private static <T> T join(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(STEP.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        }
    }

    /** @return the path of a lock's node (under the cluster manager's Curator namespace) */
    private static String lockPath(String lockName) {
        return ZK_OPTIONS.root() + "/n-" + Base64.getUrlEncoder().withoutPadding().encodeToString(lockName.getBytes(StandardCharsets.UTF_8));
    }

    /** @return the children of a path, read with a cluster manager's own Curator client (its namespace) */
    private static List<String> children(String path) throws Exception {
        CuratorFramework curator = VertxZooKeeperLocks.curator(clusterB);
        try {
            return curator.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /** @return the live threads of this JVM that are parked inside a Curator lock recipe, by name prefix */
    private static long threadsParkedInCuratorLocks() {
        long n = 0;
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            if (Arrays.stream(e.getValue()).anyMatch(f -> f.getClassName().startsWith("org.apache.curator.framework.recipes.locks."))) {
                n++;
            }
        }
        return n;
    }

    private static long workerThreadsOf(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }

    private static int liveThreads() {
        return Thread.activeCount();
    }

    // ---- tests ----

    @Test
    void waitersTakeNoThreadWhileSharedDataLockWaitersEachTakeAWorker() throws Exception {
        // ours: 50 waiters (hold streams on B) behind a holder on A
        Lease holder = call(a, () -> locksA.acquire(name));
        int threadsBefore = liveThreads();
        Queue<Integer> granted = new ConcurrentLinkedQueue<>();
        List<LockStream<Lease>> waiters = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            int index = i;
            waiters.add(call(b, () -> {
                LockStream<Lease> s = locksB.hold(name);
                s.handler(lease -> {
                    granted.add(index);
                    s.cancel(); // releases: the next waiter's turn
                });
                return Future.succeededFuture(s);
            }));
        }
        await().atMost(STEP).until(() -> children(lockPath(name)).size() == WAITERS + 1);
        int oursThreads = liveThreads() - threadsBefore;
        long oursParked = threadsParkedInCuratorLocks();
        String probe = call(b, () -> vertxB.executeBlocking(() -> "ran"));
        assertThat(probe).as("a worker task while our waiters wait").isEqualTo("ran");

        // half of them give up: their queue nodes go, and they never get the lock
        for (int i = 0; i < WAITERS / 2; i++) {
            LockStream<Lease> w = waiters.get(i);
            call(b, w::cancel);
        }
        await().atMost(STEP).until(() -> children(lockPath(name)).size() == WAITERS / 2 + 1);
        call(a, () -> locksA.release(holder));
        await().atMost(STEP).until(() -> granted.size() == WAITERS / 2);
        assertThat(granted).as("waiters granted: each of those not cancelled, once").containsExactlyInAnyOrderElementsOf(
                java.util.stream.IntStream.range(WAITERS / 2, WAITERS).boxed().toList());
        await().atMost(STEP).until(() -> children(lockPath(name)).isEmpty());

        // Vert.x's own cluster-wide lock: 50 waiters on B behind a holder on A
        String vxName = "vx-" + name;
        Lock vxHolder = call(a, () -> vertxA.sharedData().getLockWithTimeout(vxName, 10_000));
        int vxThreadsBefore = liveThreads();
        AtomicInteger vxGranted = new AtomicInteger();
        List<Future<Lock>> vxWaiters = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            vxWaiters.add(call(b, () -> Future.succeededFuture(vertxB.sharedData().getLockWithTimeout(vxName, 30_000)
                    .onSuccess(lock -> {
                        vxGranted.incrementAndGet();
                        lock.release();
                    }))));
        }
        await().atMost(STEP).until(() -> threadsParkedInCuratorLocks() >= WORKER_POOL);
        int vxThreads = liveThreads() - vxThreadsBefore;
        long vxParked = threadsParkedInCuratorLocks();
        // every worker is parked in Curator: other blocking work of that Vert.x waits behind the lock
        Future<String> starved = call(b, () -> Future.succeededFuture(vertxB.executeBlocking(() -> "ran")));
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> !starved.isComplete());
        vxHolder.release();
        for (Future<Lock> w : vxWaiters) {
            join(w);
        }
        assertThat(join(starved)).isEqualTo("ran");
        assertThat(vxGranted.get()).isEqualTo(WAITERS);

        System.out.printf("%d lock waiters on one clustered Vert.x (worker pool %d):%n"
                        + "  reactive-locks VertxLocks.hold: %d new threads, %d threads parked in a Curator lock, worker pool free%n"
                        + "  Vert.x sharedData().getLockWithTimeout: %d new threads, %d threads parked in a Curator lock"
                        + " (%d Vert.x worker threads in this JVM), worker pool exhausted (%d waiters queued behind it)%n",
                WAITERS, WORKER_POOL, oursThreads, oursParked, vxThreads, vxParked,
                workerThreadsOf("vert.x-worker-thread"), Math.max(0, WAITERS - vxParked));
        assertThat(oursParked).as("threads parked in Curator locks by our waiters").isZero();
        assertThat(oursThreads).as("new threads for our %d waiters", WAITERS).isLessThanOrEqualTo(2);
        assertThat(vxParked).as("worker threads parked by SharedData waiters").isEqualTo(WORKER_POOL);
    }

    @Test
    void aLostLockEndsTheHoldStreamAndTheLeaseIsInvalid() throws Exception {
        Promise<Lease> granted = Promise.promise();
        Promise<Void> ended = Promise.promise();
        a.runOnContext(v -> locksA.hold(name)
                .endHandler(e -> ended.complete())
                .handler(granted::tryComplete));
        Lease lease = join(granted.future());
        List<String> nodes = children(lockPath(name));
        assertThat(nodes).hasSize(1);
        // an operator (or a session expiry) removes the holder's node behind its back
        VertxZooKeeperLocks.curator(clusterB).delete().forPath(lockPath(name) + "/" + nodes.get(0));
        join(ended.future());
        assertThat(lease.isValid()).isFalse();
        // and B can take it
        Lease next = call(b, () -> locksB.acquire(name));
        assertThat(next.token()).isGreaterThan(lease.token());
        assertThat(call(b, () -> locksB.inspect(name))).isInstanceOfSatisfying(LockState.Held.class,
                h -> assertThat(h.owner()).isEqualTo(next.owner()));
        call(b, () -> locksB.release(next));
        await().atMost(STEP).until(() -> children(lockPath(name)).isEmpty());

        // Vert.x's own lock on the same cluster manager: its lease node deleted the same way, a second
        // holder is granted, and the first holder's Lock has no way to learn it lost the lock
        String vxName = "vx-" + name;
        String vxLeases = "/locks/" + vxName + "/leases";
        Lock vxFirst = call(a, () -> vertxA.sharedData().getLockWithTimeout(vxName, 10_000));
        List<String> vxNodes = children(vxLeases);
        assertThat(vxNodes).hasSize(1);
        VertxZooKeeperLocks.curator(clusterB).delete().forPath(vxLeases + "/" + vxNodes.get(0));
        Lock vxSecond = call(b, () -> vertxB.sharedData().getLockWithTimeout(vxName, 10_000));
        System.out.println("after the holder's node was deleted: our hold stream ended and the lease reads invalid;"
                + " Vert.x SharedData granted a second holder while the first still holds its Lock, unaware (Lock has no loss signal)");
        vxSecond.release();
        vxFirst.release();
    }

    @Test
    void aCancelledWaiterLeavesNothingInZooKeeper() throws Exception {
        Lease holder = call(a, () -> locksA.acquire(name));
        Queue<Lease> received = new ConcurrentLinkedQueue<>();
        LockStream<Lease> waiter = call(b, () -> Future.succeededFuture(locksB.hold(name).handler(received::add)));
        await().atMost(STEP).until(() -> children(lockPath(name)).size() == 2);
        call(b, waiter::cancel);
        await().atMost(STEP).until(() -> children(lockPath(name)).size() == 1);
        call(a, () -> locksA.release(holder));
        await().atMost(STEP).until(() -> children(lockPath(name)).isEmpty());
        assertThat(received).isEmpty();
        assertThat(UNHANDLED).isEmpty();
    }

    @Test
    void aClusterManagerThatHasNotJoinedIsRefused() {
        assertThatThrownBy(() -> VertxZooKeeperLocks.connect(new ZookeeperClusterManager(new JsonObject())))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clusterManager");
        assertThatThrownBy(() -> VertxZooKeeperLocks.connect(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("clusterManager");
    }
}
