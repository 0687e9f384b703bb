package io.reactivelocks.redis;

import static io.reactivelocks.redis.TopologyProbe.STEP;
import static io.reactivelocks.redis.TopologyProbe.log;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.server.RedisSentinelTopology;
import io.reactivelocks.test.server.ServerHandle;
import java.time.Duration;
import java.util.ArrayList;
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
import reactor.core.publisher.Mono;

/**
 * Locks on a Redis primary + replica under three Sentinels ({@link RedisSentinelTopology}), through
 * the plain {@link RedisLocks#connect(RedisClient, RedisLockOptions)} with a
 * {@code redis-sentinel://...#mymaster} URI: locks, tokens and the release notification through the
 * master the Sentinels name, and each fault of the master: what the holder sees, how many grants
 * made just before it the new master forgot, that tokens stay strictly increasing, a typed error while
 * no master serves and a grant after the failover; under a partition, a client left on the old
 * master's side is still granted what the new master grants (split brain, shown, not hidden); the
 * planned failover keeps the holder's lease.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisSentinelTopologyTest {

    private static final String TOPOLOGY = "redis-sentinel";
    private static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(1)).build();
    private static final LockOptions LONG = OPTIONS.mutate().leaseTime(Duration.ofSeconds(60)).build();

    private static RedisSentinelTopology sentinel;
    private static ClientResources resources;
    private static RedisClient client;
    private static RedisURI uri;
    private static String prefix;
    private static LockStore storeA;
    private static LockStore storeB;
    private static LockClient a;
    private static LockClient b;
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    static void start() {
        sentinel = RedisSentinelTopology.start();
        resources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(100))).build();
        uri = RedisURI.create(sentinel.endpoints());
        uri.setTimeout(Duration.ofSeconds(5));
        client = RedisClient.create(resources, uri);
        prefix = "rltest:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        storeA = RedisLocks.connect(client, redisOptions());
        storeB = RedisLocks.connect(client, redisOptions());
        a = storeA.locks(OPTIONS);
        b = storeB.locks(OPTIONS);
    }

    /** Options with the Sentinel URI set, so connects are fully asynchronous (Lettuce asks the Sentinels). */
    static RedisLockOptions redisOptions() {
        return RedisLockOptions.builder().keyPrefix(prefix).uri(uri).build();
    }

    @AfterAll
    static void stop() {
        try {
            if (storeA != null) {
                storeA.close().onErrorResume(e -> Mono.empty()).block(STEP);
                storeB.close().onErrorResume(e -> Mono.empty()).block(STEP);
            }
            if (client != null) {
                client.shutdown();
                resources.shutdown();
            }
        } finally {
            if (sentinel != null) {
                sentinel.close();
            }
        }
    }

    @AfterEach
    void heal() throws Exception {
        for (AutoCloseable c : closeAfter) {
            c.close();
        }
        sentinel.heal();
    }

    private static String name(String base) {
        return base + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    @Order(1)
    void locksTokensAndReleaseNotificationsThroughTheSentinelMaster() {
        String n = name("mutex");
        Lease first = a.acquire(n).block(STEP);
        assertThat(b.tryAcquire(n).blockOptional(STEP)).isEmpty();
        first.release().block(STEP);
        Lease second = b.acquire(n).block(STEP);
        assertThat(second.token()).isGreaterThan(first.token());
        second.release().block(STEP);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            assertThat(c.sync().exists(new RedisKeys(prefix).lock(n))).as("lock key left on the master").isZero();
        }

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
    @Order(2)
    void killedMasterTypedErrorThenTheNewMasterGrantsWithHigherTokens() {
        String first = faultAround("kill", () -> sentinel.killLeader());
        // the Sentinels name the dead master until down-after (1 s) and their election have passed
        assertThat(first).startsWith("error: LockBackendException (transient)");
    }

    @Test
    @Order(3)
    void plannedFailoverKeepsTokensIncreasing() {
        faultAround("failover", () -> sentinel.failover());
    }

    @Test
    @Order(4)
    void partitionedMasterSplitBrainIsFencedByTokens() {
        ServerHandle old = sentinel.leader();
        RedisClient direct = RedisClient.create(resources, RedisURI.create(sentinel.directUri(old)));
        LockStore oldSide = RedisLocks.connect(direct, RedisLockOptions.builder().keyPrefix(prefix)
                .uri(RedisURI.create(sentinel.directUri(old))).build());
        LockClient onOldSide = oldSide.locks(OPTIONS);
        closeAfter.add(() -> {
            oldSide.close().onErrorResume(e -> Mono.empty()).block(STEP);
            direct.shutdown();
        });
        faultAround("partition", () -> sentinel.partitionLeader());
        // the partition is still in place: the new master serves the Sentinel clients, the old one the client beside it
        String n = name("split");
        Lease onNew = b.acquire(n, LONG).block(STEP);
        Lease onOld = onOldSide.tryAcquire(n, LONG).block(STEP);
        log(TOPOLOGY, "partition: a client left on the old master's side "
                + (onOld != null ? "was granted the name the new master had granted (split brain), token "
                + onOld.token() + " vs " + onNew.token() : "was refused"));
        if (onOld != null) {
            // granted later on the same machine clock: the fencing token still orders the two grants
            assertThat(onOld.token()).isGreaterThan(onNew.token());
        }
    }

    /**
     * A holder (2 s lease) and a burst of 20 grants (60 s leases), then the fault; measures what the
     * holder saw and how many grants were forgotten, asserts that the first attempt ends in time, a new
     * grant within 30 s with a token above every earlier one of that name.
     */
    private String faultAround(String fault, Runnable inject) {
        String held = name(fault + "-held");
        List<String> burstNames = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            burstNames.add(name(fault + "-burst"));
        }
        TopologyProbe.Holder holder = new TopologyProbe.Holder(a, held);
        closeAfter.add(holder);
        List<TopologyProbe.Grant> burst = TopologyProbe.burst(a, burstNames, LONG);
        long t0 = System.nanoTime();
        inject.run();
        String first = TopologyProbe.firstAttempt(b, name(fault + "-first"), Duration.ofSeconds(3));
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
