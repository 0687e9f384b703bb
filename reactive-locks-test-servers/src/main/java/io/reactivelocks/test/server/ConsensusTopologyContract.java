package io.reactivelocks.test.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockException;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Locks on a replicated deployment of a linearizable store (etcd cluster, ZooKeeper ensemble), across
 * each fault of its {@link Topology}: a holder either keeps its lease through the fault, and nobody else
 * is granted the lock until it releases, or its hold stream completes (the loss is signalled) before
 * anyone else is granted it; tokens grow strictly across leader changes; after {@link Topology#heal()}
 * a new acquire succeeds within a bound; with the quorum gone an acquire fails with a {@link LockException}
 * within its timeout. A store module's test extends this class, starts the topology once per class and
 * supplies {@link #topology()}, {@link #newClient()} (each call its own connection, configured with
 * every endpoint of the topology) and {@link #keysLeft()}.
 *
 * <p>What each run saw (lease kept or lost, how long until the cluster served again) is printed to
 * standard output, one line per fault, for the docs.
 */
public abstract class ConsensusTopologyContract {

    /** Generous bound for a step against the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);
    /** Bound for the deployment to serve again after a fault or heal (an election, a restart). */
    protected static final Duration RECOVERY = Duration.ofSeconds(30);

    private final List<LockClient> clients = new ArrayList<>();

    /** @return the running topology, started once per test class */
    protected abstract Topology topology();

    /**
     * A new lock client with its own connection(s), configured with every endpoint of the topology and
     * {@link #options()}.
     *
     * @return the client; the contract closes it after each test
     */
    protected abstract LockClient newClient();

    /** @return the lock keys or nodes left on the server under this test class's prefix, read with the store's own client */
    protected abstract List<String> keysLeft();

    /** @return the lock options of every client: 2 s leases, 1 s requests */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofSeconds(2))
                .requestTimeout(Duration.ofSeconds(1))
                .build();
    }

    private LockClient client() {
        LockClient c = newClient();
        clients.add(c);
        return c;
    }

    @AfterEach
    void healAndClose() {
        try {
            topology().heal();
        } finally {
            for (LockClient c : clients) {
                c.close().onErrorResume(e -> Mono.empty()).block(STEP);
            }
            clients.clear();
        }
        await().atMost(RECOVERY).untilAsserted(() -> assertThat(keysLeft()).as("keys left on the server").isEmpty());
    }

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    /** A hold, recording its leases and when it ended: completed (positive), errored, or cancelled by the test. */
    private record Hold(Disposable subscription, List<Lease> leases, AtomicLong endedAt, AtomicReference<String> how) {
        static Hold of(LockClient c, String name) {
            List<Lease> leases = new CopyOnWriteArrayList<>();
            AtomicLong ended = new AtomicLong();
            AtomicReference<String> how = new AtomicReference<>();
            Disposable d = c.hold(name).subscribe(leases::add,
                    e -> {
                        how.compareAndSet(null, "errored: " + e);
                        ended.compareAndSet(0, System.nanoTime());
                    },
                    () -> {
                        how.compareAndSet(null, "completed (loss signalled)");
                        ended.compareAndSet(0, System.nanoTime());
                    });
            return new Hold(d, leases, ended, how);
        }

        boolean running() {
            return endedAt.get() == 0;
        }

        void release() {
            how.compareAndSet(null, "released by its holder");
            endedAt.compareAndSet(0, System.nanoTime());
            subscription.dispose();
        }
    }

    /** A waiting acquire, recording its lease and when it was granted. */
    private record Waiter(Disposable subscription, AtomicReference<Lease> lease, AtomicLong grantedAt) {
        static Waiter of(LockClient c, String name) {
            AtomicReference<Lease> lease = new AtomicReference<>();
            AtomicLong at = new AtomicLong();
            Disposable d = c.acquire(name).subscribe(l -> {
                at.set(System.nanoTime());
                lease.set(l);
            }, e -> { });
            return new Waiter(d, lease, at);
        }
    }

    @Test
    void locksWorkThroughTheTopologyAndAReleaseWakesTheWaiter() {
        LockClient a = client();
        LockClient b = client();
        String name = name("basic");
        Lease first = a.acquire(name).block(RECOVERY);
        assertThat(first).isNotNull();
        Waiter waiter = Waiter.of(b, name);
        first.release().block(STEP);
        long released = System.nanoTime();
        await().atMost(STEP).until(() -> waiter.lease().get() != null);
        Lease second = waiter.lease().get();
        // woken by the release notification, not by a lease running out
        assertThat(Duration.ofNanos(waiter.grantedAt().get() - released)).isLessThan(options().leaseTime());
        assertThat(second.token()).isGreaterThan(first.token());
        second.release().block(STEP);
        Lease third = b.tryAcquire(name).block(STEP);
        assertThat(third).isNotNull();
        assertThat(third.token()).isGreaterThan(second.token());
        third.release().block(STEP);
    }

    @Test
    void aHolderAcrossAKilledLeader() {
        holderAcross("kill-leader", () -> topology().killLeader());
    }

    @Test
    void aHolderAcrossAFailover() {
        holderAcross("failover", () -> topology().failover());
    }

    @Test
    void aHolderAcrossAPartitionedLeader() {
        holderAcross("partition-leader", () -> topology().partitionLeader());
    }

    @Test
    void aHolderAcrossASlowLeader() {
        holderAcross("slow-leader", () -> topology().slowNode(Duration.ofMillis(200)));
    }

    /**
     * A holds, B waits; the fault strikes; once a third client is granted another lock (the deployment
     * serves again), A still holding releases. B must be granted only after A's hold ended (released, or
     * completed with the loss), with a greater token; after the heal a new acquire succeeds.
     */
    private void holderAcross(String fault, Runnable inject) {
        LockClient a = client();
        LockClient b = client();
        LockClient c = client();
        String name = name(fault);
        Hold hold = Hold.of(a, name);
        await().atMost(RECOVERY).until(() -> !hold.leases().isEmpty());
        Waiter waiter = Waiter.of(b, name);

        long faultAt = System.nanoTime();
        inject.run();
        Lease probe = c.acquire(name("probe-" + fault)).block(RECOVERY);
        assertThat(probe).as("a lock granted while the fault is in place").isNotNull();
        long servingAfter = System.nanoTime() - faultAt;
        probe.release().onErrorResume(e -> Mono.empty()).block(STEP);

        boolean kept = hold.running();
        if (kept) {
            assertThat(waiter.lease().get()).as("b granted while a still holds").isNull();
            hold.release();
        }
        await().atMost(RECOVERY).until(() -> waiter.lease().get() != null);
        assertThat(hold.endedAt().get()).as("a's hold ended (" + hold.how().get() + ") before b was granted")
                .isPositive().isLessThan(waiter.grantedAt().get());
        assertThat(hold.how().get()).as("a's hold did not error").doesNotStartWith("errored");
        long lastA = hold.leases().get(hold.leases().size() - 1).token();
        assertThat(waiter.lease().get().token()).as("b's token after a's").isGreaterThan(lastA);
        waiter.lease().get().release().onErrorResume(e -> Mono.empty()).block(STEP);

        long healAt = System.nanoTime();
        topology().heal();
        Lease after = b.acquire(name).block(RECOVERY);
        assertThat(after).isNotNull();
        assertThat(after.token()).isGreaterThan(waiter.lease().get().token());
        after.release().block(STEP);
        System.out.printf("[%s] %s: holder %s; a lock granted %d ms after the fault; heal + acquire %d ms%n",
                topology().name(), fault, kept ? "kept its lease (released by itself)" : hold.how().get(),
                servingAfter / 1_000_000, (System.nanoTime() - healAt) / 1_000_000);
    }

    @Test
    void withTheQuorumGoneAnAcquireFailsTypedWithinItsTimeout() {
        LockClient a = client();
        List<ServerHandle> nodes = topology().nodes();
        ServerHandle leader = topology().leader();
        // keep only one node: no majority, no leader
        for (ServerHandle n : nodes) {
            if (n != leader) {
                n.kill();
            }
        }
        AtomicReference<Throwable> error = new AtomicReference<>();
        long start = System.nanoTime();
        Lease lease = a.tryAcquire(name("no-quorum"))
                .timeout(Duration.ofSeconds(20), Mono.error(new AssertionError("no signal within 20 s")))
                .doOnError(error::set)
                .onErrorResume(e -> Mono.empty())
                .block(RECOVERY);
        long took = System.nanoTime() - start;
        assertThat(lease).as("granted without a quorum").isNull();
        assertThat(error.get()).isInstanceOf(LockException.class);
        System.out.printf("[%s] no quorum: %s after %d ms%n", topology().name(), error.get(), took / 1_000_000);
    }
}
