package io.reactivelocks.redis;

import static io.reactivelocks.redis.TopologyProbe.STEP;
import static io.reactivelocks.redis.TopologyProbe.log;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.HeldGrant;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.fencing.StaleTokenException;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.server.RedisClusterTopology;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * Locks on a Redis Cluster of three masters with a replica each ({@link RedisClusterTopology}),
 * through {@link RedisLocks#connect(RedisClusterClient, RedisLockOptions)} sessions: every concept on names of every master (a script whose keys span two slots would fail
 * with CROSSSLOT), renewal batches over names of all masters, the release notification over cluster
 * pub/sub, and each fault of the leader (the master of slot 0): what the holder sees, how many
 * grants made just before the fault the new master forgot (asynchronous replication), that tokens
 * stay strictly increasing, that a client gets a typed error while no master serves the slot and a
 * grant after the failover; the planned failover and the partition of the leader keep the holder's lease.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisClusterTopologyTest {

    private static final String TOPOLOGY = "redis-cluster";
    private static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(1)).build();
    private static final LockOptions LONG = OPTIONS.mutate().leaseTime(Duration.ofSeconds(60)).build();

    private static RedisClusterTopology cluster;
    private static ClientResources resources;
    private static RedisClusterClient client;
    private static String prefix;
    private static RedisKeys keys;
    private static LockStore storeA;
    private static LockStore storeB;
    private static LockClient a;
    private static LockClient b;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    static void start() {
        cluster = RedisClusterTopology.start();
        resources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(100))).build();
        client = clusterClient();
        prefix = "rltest:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        keys = new RedisKeys(prefix);
        storeA = RedisLocks.connect(client, redisOptions());
        storeB = RedisLocks.connect(client, redisOptions());
        a = storeA.locks(OPTIONS);
        b = storeB.locks(OPTIONS);
    }

    /** A cluster client that follows failovers: adaptive topology refresh and a short periodic one. */
    static RedisClusterClient clusterClient() {
        List<RedisURI> seeds = Arrays.stream(cluster.endpoints().split(",")).map(u -> {
            RedisURI uri = RedisURI.create(u);
            uri.setTimeout(Duration.ofSeconds(5));
            return uri;
        }).toList();
        RedisClusterClient c = RedisClusterClient.create(resources, seeds);
        c.setOptions(ClusterClientOptions.builder()
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofMillis(200))
                        .enablePeriodicRefresh(Duration.ofSeconds(1))
                        .build())
                .build());
        return c;
    }

    static RedisLockOptions redisOptions() {
        return RedisLockOptions.builder().keyPrefix(prefix).build();
    }

    @AfterAll
    static void stop() {
        try {
            if (storeA != null) {
                storeA.close().onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(STEP);
                storeB.close().onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(STEP);
            }
            if (client != null) {
                client.shutdown();
                resources.shutdown();
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    @AfterEach
    void heal() throws Exception {
        for (AutoCloseable c : closeAfter) {
            c.close();
        }
        cluster.heal();
    }

    /** @return a fresh name whose keys live on the master of the given slot range */
    private static String nameInRange(String base, int from, int to) {
        for (int i = 0; ; i++) {
            String n = base + "-" + UUID.randomUUID().toString().substring(0, 6) + "-" + i;
            int slot = SlotHash.getSlot(RedisKeys.bytes(keys.lock(n)));
            if (slot >= from && slot <= to) {
                return n;
            }
        }
    }

    private static List<String> oneNamePerMaster(String base) {
        return List.of(nameInRange(base, 0, 5460), nameInRange(base, 5461, 10922), nameInRange(base, 10923, 16383));
    }

    @Test
    @Order(1)
    void everyConceptWorksOnNamesOfEveryMaster() {
        for (String n : oneNamePerMaster("mutex")) {
            Lease first = a.acquire(n).block(STEP);
            assertThat(b.tryAcquire(n).blockOptional(STEP)).as("busy while %s holds", first.owner()).isEmpty();
            assertThat(b.inspect(n).block(STEP)).isInstanceOfSatisfying(LockState.Held.class,
                    h -> assertThat(h.owner()).isEqualTo(first.owner()));
            first.release().block(STEP);
            Lease second = b.acquire(n).block(STEP);
            assertThat(second.token()).isGreaterThan(first.token());
            second.release().block(STEP);
            try (StatefulRedisClusterConnection<String, String> c = client.connect()) {
                assertThat(c.sync().exists(keys.lock(n))).as("lock key of %s left on the server", n).isZero();
            }
        }
        LockStore store = RedisLocks.connect(client, redisOptions());
        LockClient fair = store.fairLocks(OPTIONS);
        Semaphore semaphore = store.semaphores(OPTIONS);
        ReadWriteLock rw = store.readWriteLocks(ReadWriteLockOptions.of(OPTIONS));
        WindowLock window = store.windowLocks(OPTIONS);
        TaskQueue queue = store.taskQueue(OPTIONS);
        FencedValues values = store.fencedValues();
        try {
            for (String n : oneNamePerMaster("concepts")) {
                Lease f1 = fair.acquire(n).block(STEP);
                f1.release().block(STEP);
                assertThat(fair.acquire(n).flatMap(l -> l.release().thenReturn(l.token())).block(STEP)).isGreaterThan(f1.token());

                Lease p1 = semaphore.acquire(n, 2).block(STEP);
                Lease p2 = semaphore.acquire(n, 2).block(STEP);
                assertThat(semaphore.tryAcquire(n, 2).blockOptional(STEP)).as("third permit of two").isEmpty();
                assertThat(p2.token()).isGreaterThan(p1.token());
                p1.release().then(p2.release()).block(STEP);

                Lease r = rw.read().acquire(n).block(STEP);
                assertThat(rw.write().tryAcquire(n).blockOptional(STEP)).as("writer while a reader holds").isEmpty();
                r.release().block(STEP);
                Lease w = rw.write().acquire(n).block(STEP);
                assertThat(w.token()).isGreaterThan(r.token());
                w.release().block(STEP);

                WindowClaim claim = window.tryClaim(n, Duration.ofHours(1)).block(STEP);
                assertThat(claim).isNotNull();
                assertThat(window.tryClaim(n, Duration.ofHours(1)).blockOptional(STEP)).as("second claim in the window").isEmpty();

                assertThat(queue.register(n, "task-1", 1).block(STEP)).isTrue();
                TaskClaim task = queue.tryCapture(n, 1).blockFirst(STEP);
                assertThat(task.taskId()).isEqualTo("task-1");
                assertThat(queue.complete(task).block(STEP)).isTrue();

                assertThat(values.write(n, w.token(), "v").block(STEP)).isTrue();
                assertThat(values.write(n, r.token(), "older").block(STEP)).as("older token refused").isFalse();
                assertThat(values.read(n).block(STEP).value()).isEqualTo("v");
            }
        } finally {
            store.close().block(STEP); // every concept it handed out, then its connections
        }
    }

    @Test
    @Order(2)
    void renewalBatchesOverEveryMasterKeepTheLeasesAndAReleaseWakesAnObserver() {
        LockOptions shortLease = OPTIONS.mutate().leaseTime(Duration.ofMillis(1200)).build();
        List<String> names = new ArrayList<>(oneNamePerMaster("renew"));
        names.addAll(oneNamePerMaster("renew"));
        List<List<Lease>> seen = new ArrayList<>();
        List<Disposable> holds = new ArrayList<>();
        for (String n : names) {
            List<Lease> leases = new CopyOnWriteArrayList<>();
            seen.add(leases);
            holds.add(a.hold(n, shortLease).subscribe(leases::add));
        }
        // three renewals of every lease: the batches (one script call per slot) went to all three masters
        await().atMost(STEP).until(() -> seen.stream().allMatch(l -> l.size() >= 4));
        holds.forEach(Disposable::dispose);

        String n = names.get(0);
        List<LockState> states = new CopyOnWriteArrayList<>();
        Lease held = a.acquire(n, LONG).block(STEP);
        Disposable observer = b.observe(n).subscribe(states::add);
        try {
            await().atMost(STEP).until(() -> states.stream().anyMatch(s -> s instanceof LockState.Held));
            held.release().block(STEP);
            // the lease is 60 s: only the release notification frees it this early
            await().atMost(Duration.ofSeconds(10)).until(() -> states.get(states.size() - 1) instanceof LockState.Free);
        } finally {
            observer.dispose();
        }
    }

    @Test
    @Order(3)
    void adminListsAndForceReleasesNamesOfEveryMaster() {
        LockStore holders = RedisLocks.connect(client, redisOptions());
        LockStore operator = RedisLocks.connect(client, redisOptions());
        try {
            String p = "admin-" + UUID.randomUUID().toString().substring(0, 8) + "/";
            List<String> locks = oneNamePerMaster(p + "lock");
            List<String> pools = oneNamePerMaster(p + "pool");
            List<String> docs = oneNamePerMaster(p + "doc");
            // a 60 s lease renewed every second: the evicted holder learns of its loss at once
            LockOptions longRenewedOften = LONG.mutate().renewalInterval(Duration.ofSeconds(1)).build();
            List<Lease> held = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(holders.locks(OPTIONS).acquire(locks.get(i), longRenewedOften).block(STEP));
                held.add(holders.semaphores(OPTIONS).acquire(pools.get(i), 2).block(STEP));
                held.add(holders.readWriteLocks(ReadWriteLockOptions.of(OPTIONS)).read().acquire(docs.get(i)).block(STEP));
            }
            LockAdmin admin = operator.admin();

            List<String> every = new ArrayList<>(locks);
            every.addAll(pools);
            every.addAll(docs);
            assertThat(admin.list(p).collectList().block(STEP)).as("the names of all three masters")
                    .extracting(HeldGrant::name).containsExactlyElementsOf(every.stream().sorted().toList());
            assertThat(admin.list(locks.get(1)).collectList().block(STEP)).singleElement()
                    .satisfies(g -> assertThat(g.token()).isEqualTo(held.get(3).token()));

            // a waiter on each master's lock: the force-release's notification wakes it, long before the 60 s lease
            List<reactor.core.publisher.Mono<Lease>> waiters = new ArrayList<>();
            for (String n : locks) {
                reactor.core.publisher.Mono<Lease> w = b.acquire(n, LONG).cache();
                w.subscribe(l -> { }, e -> { });
                waiters.add(w);
            }
            for (String n : every) {
                assertThat(admin.forceRelease(n).block(STEP)).as("one grant removed from %s", n).hasSize(1);
            }
            for (int i = 0; i < 3; i++) {
                Lease next = waiters.get(i).block(Duration.ofSeconds(10));
                assertThat(next.token()).isGreaterThan(held.get(3 * i).token());
                next.release().block(STEP);
            }
            for (Lease evicted : held) {
                evicted.lost().block(STEP); // renewal refused: each holder learns it lost the name
            }
            assertThat(admin.list(p).collectList().block(STEP)).isEmpty();
        } finally {
            holders.close().block(STEP);
            operator.close().block(STEP);
        }
    }

    @Test
    @Order(3)
    void fencedWritesOnApplicationKeysOfEveryMaster() {
        Lease older = a.acquire(nameInRange("fenced", 0, 16383)).block(STEP);
        older.release().block(STEP);
        Lease newer = a.acquire(older.name()).block(STEP);
        newer.release().block(STEP);
        try (StatefulRedisClusterConnection<String, String> c = client.connect()) {
            RedisFencedWrites writes = RedisFencedWrites.of(c);
            for (int[] range : new int[][] {{0, 5460}, {5461, 10922}, {10923, 16383}}) {
                String key = null;
                for (int i = 0; key == null; i++) {
                    String k = prefix + "app:" + i;
                    int slot = SlotHash.getSlot(k);
                    key = slot >= range[0] && slot <= range[1] ? k : null;
                }
                StepVerifier.create(writes.write(key, "value", "new", newer.token())).expectComplete().verify(STEP);
                StepVerifier.create(writes.write(key, "value", "old", older.token())).expectError(StaleTokenException.class).verify(STEP);
                assertThat(c.sync().hgetall(key)).containsEntry("value", "new").containsEntry("fence", Long.toString(newer.token()));
            }
        }
    }

    @Test
    @Order(4)
    void killedLeaderTypedErrorThenTheReplicaGrantsWithHigherTokens() {
        String first = faultAround("kill", () -> cluster.killLeader());
        // no master serves slot 0 until the replica is promoted (after the 1.5 s node timeout)
        assertThat(first).startsWith("error: LockBackendException (transient)");
    }

    @Test
    @Order(5)
    void plannedFailoverKeepsTokensIncreasing() {
        faultAround("failover", () -> cluster.failover());
    }

    @Test
    @Order(6)
    void partitionedLeaderIsReplacedAndTokensStayIncreasing() {
        faultAround("partition", () -> cluster.partitionLeader());
    }

    /**
     * A holder (2 s lease) and a burst of 20 grants (60 s leases) on the leader's slots, then the
     * fault; measures what the holder saw and how many grants were forgotten, asserts the first
     * attempt ends in time with a typed error or an answer, a new grant within 30 s with a token above
     * every earlier one of that name.
     */
    private String faultAround(String fault, Runnable inject) {
        String held = nameInRange(fault + "-held", 0, 5460);
        List<String> burstNames = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            burstNames.add(nameInRange(fault + "-burst", 0, 5460));
        }
        TopologyProbe.Holder holder = new TopologyProbe.Holder(a, held);
        closeAfter.add(holder);
        List<TopologyProbe.Grant> burst = TopologyProbe.burst(a, burstNames, LONG);
        long t0 = System.nanoTime();
        inject.run();
        String first = TopologyProbe.firstAttempt(b, nameInRange(fault + "-first", 0, 5460), Duration.ofSeconds(3));
        String holderSaw = holder.settle(t0, Duration.ofMillis(2500));
        Lease after = TopologyProbe.acquireAgain(b, held, Duration.ofSeconds(30), l -> l.token() > holder.token());
        long grantedMs = (System.nanoTime() - t0) / 1_000_000;
        after.release().block(STEP);
        int forgotten = TopologyProbe.forgotten(b, burst);
        for (TopologyProbe.Grant g : burst) {
            Lease again = b.tryAcquire(g.name()).block(STEP);
            if (again != null) {
                assertThat(again.token()).as("token of %s after the %s", g.name(), fault).isGreaterThan(g.token());
                again.release().block(STEP);
            }
        }
        log(TOPOLOGY, fault + ": first attempt " + first + "; holder " + holderSaw + "; new grant of its name after "
                + grantedMs + " ms; grants forgotten: " + forgotten + "/" + burst.size());
        return first;
    }
}
