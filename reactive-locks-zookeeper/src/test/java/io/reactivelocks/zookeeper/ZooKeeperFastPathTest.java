package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.test.MutualExclusionChecker;
import io.reactivelocks.test.fault.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The version-guarded create of {@link ZooKeeperLockQueue}: a backend that knows a lock free at the
 * lock node's data version is granted by the create's transaction alone, and only when no other
 * create happened on that very lock node since.
 */
class ZooKeeperFastPathTest {

    private static final Duration STEP = Duration.ofSeconds(15);

    private static ZooKeeperTestSupport zk;
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.startOwn();
    }

    @AfterAll
    static void stopServer() {
        if (zk != null) {
            zk.close();
        }
    }

    @AfterEach
    void closeClientsAndCheckNothingLeft() {
        for (LockClient c : clients) {
            c.close().block(STEP);
        }
        zk.closeProxies();
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).as("znodes left").isEmpty());
    }

    private LockClient client(ZooKeeperLockBackend b) {
        LockClient c = LockClient.create(b, LockOptions.builder().leaseTime(ZooKeeperTestSupport.SESSION)
                .requestTimeout(Duration.ofSeconds(5)).drift(0.05, Duration.ofMillis(20)).build());
        clients.add(c);
        return c;
    }

    private LockClient client() {
        return client(zk.backend());
    }

    private String lockPath(String name) {
        return new ZNodeNames(zk.root).lockPath(name);
    }

    private Stat lockNode(String name) throws Exception {
        return zk.checker().checkExists().forPath(lockPath(name));
    }

    @Test
    void aBackendThatKnowsTheLockFreeIsGrantedWithoutAListing() {
        String name = "fast-" + UUID.randomUUID();
        LockClient c = client();
        c.acquire(name).block(STEP).release().block(STEP); // learns the lock free at its version
        long reads = zk.readsUnderRoot();
        for (int i = 0; i < 10; i++) {
            c.acquire(name).block(STEP).release().block(STEP);
        }
        // without the fast path each grant lists the children (10 reads); a confirmation may fall in between
        assertThat(zk.readsUnderRoot() - reads).as("reads for 10 pairs").isLessThanOrEqualTo(2);
    }

    /** A fast create refused for want of the lock's node (pruned, or the root swept too) creates it and goes on at once. */
    @Test
    void anAcquireAfterThePruneOfTheLockNodeTakesTheSlowPathAtOnce() throws Exception {
        String name = "pruned-" + UUID.randomUUID();
        LockClient c = client();
        for (int i = 0; i < 3; i++) {
            c.acquire(name).block(STEP).release().block(STEP); // knows the lock free
            await().atMost(STEP).until(() -> lockNode(name) == null); // the janitor's prune
            if (i == 2) {
                zk.checker().delete().forPath(zk.root); // and the server's container sweep, of the root too
            }
            long start = System.nanoTime();
            c.acquire(name).block(STEP).release().block(STEP);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("acquire after a prune").isLessThan(Duration.ofSeconds(1));
        }
    }

    @Test
    void twoBackendsAlternatingOnOneNameEachOnItsFastPathAreNeverBothGranted() throws Exception {
        String name = "alternate-" + UUID.randomUUID();
        LockClient a = client();
        LockClient b = client();
        MutualExclusionChecker checker = new MutualExclusionChecker();
        // runs of two on each backend: the second of a run goes by the fast path, the first finds the
        // other's create and takes the slow path
        for (int i = 0; i < 10; i++) {
            for (LockClient c : List.of(a, a, b, b)) {
                Lease l = c.acquire(name).block(STEP);
                try (MutualExclusionChecker.Hold h = checker.begin(name, l.owner(), l.token())) {
                    assertThat(zk.children(name)).as("nodes while held").hasSize(1);
                }
                l.release().block(STEP);
            }
        }
        // and both at once, each granted by its fast path whenever the other's create came before its knowledge
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (LockClient c : List.of(a, b)) {
            runs.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 40; i++) {
                    Lease l = c.acquire(name).block(STEP);
                    try (MutualExclusionChecker.Hold h = checker.begin(name, l.owner(), l.token())) {
                        assertThat(l.isValid()).isTrue();
                    }
                    l.release().block(STEP);
                }
            }));
        }
        CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        checker.assertNoOverlap();
        checker.assertTokensStrictlyIncreasing(name);
    }

    @Test
    void aCreateByAnotherBackendSinceOurKnowledgeSendsUsToTheSlowPathAndQueuesUs() throws Exception {
        String name = "other-" + UUID.randomUUID();
        LockClient a = client();
        LockClient b = client();
        a.acquire(name).block(STEP).release().block(STEP); // a knows the lock free at version 1
        Lease held = b.acquire(name).block(STEP); // b's create bumps the version to 2
        assertThat(lockNode(name).getVersion()).isEqualTo(2);
        CompletableFuture<Lease> waiting = a.acquire(name).toFuture();
        // a's transaction at version 1 was refused; its slow path queued it behind b (a watch on b's node)
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.watchCountOnQueueOf(name)).isEqualTo(1));
        assertThat(waiting).as("granted while b holds").isNotDone();
        assertThat(zk.children(name)).hasSize(2);
        assertThat(a.tryAcquire(name).blockOptional(STEP)).as("tryAcquire while b holds").isEmpty();
        held.release().block(STEP);
        Lease l = waiting.get(15, TimeUnit.SECONDS);
        assertThat(l.token()).isGreaterThan(held.token());
        l.release().block(STEP);
    }

    @Test
    void aVersionLearnedOnALockNodeThatWasDeletedAndCreatedAgainProvesNothing() throws Exception {
        String name = "recreated-" + UUID.randomUUID();
        LockClient a = client();
        LockClient b = client();
        a.acquire(name).block(STEP).release().block(STEP); // a knows the lock free at version 1 of this node
        long first = lockNode(name).getCzxid();
        // the janitor prunes the emptied node; b creates it again (version 0) and its create bumps it to 1
        await().atMost(STEP).until(() -> lockNode(name) == null);
        Lease held = b.acquire(name).block(STEP);
        Stat again = lockNode(name);
        assertThat(again.getCzxid()).isNotEqualTo(first);
        assertThat(again.getVersion()).as("the version a expects").isEqualTo(1);
        // a's transaction at version 1 succeeds on the new node, yet b's node is first: a must queue
        CompletableFuture<Lease> waiting = a.acquire(name).toFuture();
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.watchCountOnQueueOf(name)).isEqualTo(1));
        assertThat(waiting).as("granted while b holds").isNotDone();
        held.release().block(STEP);
        Lease l = waiting.get(15, TimeUnit.SECONDS);
        assertThat(l.token()).isGreaterThan(held.token());
        l.release().block(STEP);
    }

    @Test
    void aTransactionWhoseAnswerIsLostLeavesOneNodePerOwnerAndNoneAfterRelease() throws Exception {
        String name = "lost-" + UUID.randomUUID();
        ZooKeeperLockBackend backend = zk.proxiedBackend();
        LockClient c = client(backend);
        FaultProxy proxy = zk.proxyOf(backend);
        for (boolean fast : List.of(false, true)) {
            if (fast) {
                c.acquire(name).block(STEP).release().block(STEP); // the next create goes by the fast path
            }
            proxy.latency(Duration.ofMillis(400), Duration.ZERO);
            CompletableFuture<Lease> acquiring = c.acquire(name).toFuture();
            // the transaction reached the server (its node is there); its answer is still in the proxy
            await().atMost(STEP).pollInterval(Duration.ofMillis(5)).until(() -> !zk.children(name).isEmpty());
            proxy.cutConnections();
            proxy.heal();
            Lease l = acquiring.get(15, TimeUnit.SECONDS);
            await().atMost(STEP).untilAsserted(() -> assertThat(zk.children(name)).as("nodes of the holder (fast: %s)", fast)
                    .hasSize(1).allSatisfy(n -> assertThat(n).contains(ZNodeNames.nodeName(l.owner()))));
            l.release().block(STEP);
            assertThat(zk.children(name)).as("after release").isEmpty();
        }
    }
}
