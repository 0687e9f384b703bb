package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.test.MutualExclusionChecker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The queue: each waiter watches its predecessor only, so a hand-over fires one watch, not one
 * per waiter (no herd), and a waiter that gives up wakes only its successor.
 */
class ZooKeeperQueueTest {

    private static final Duration STEP = Duration.ofSeconds(15);

    private static ZooKeeperTestSupport zk;
    private final List<ZooKeeperLockBackend> backends = new ArrayList<>();
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.start();
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
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).as("znodes left").isEmpty());
    }

    private LockClient client() {
        ZooKeeperLockBackend b = zk.backend();
        backends.add(b);
        LockClient c = LockClient.create(b, LockOptions.builder().leaseTime(ZooKeeperTestSupport.SESSION)
                .requestTimeout(Duration.ofSeconds(5)).drift(0.05, Duration.ofMillis(20)).build());
        clients.add(c);
        return c;
    }

    private long sum(ToLongFunction<ZooKeeperLockBackend> counter) {
        return backends.stream().mapToLong(counter).sum();
    }

    @Test
    void aLockUsedInALoopKeepsItsNodeBetweenUsesAndIsPrunedAfterwards() {
        String name = "loop-" + UUID.randomUUID();
        LockClient c = client();
        for (int i = 0; i < 20; i++) {
            Lease lease = c.acquire(name).block(STEP);
            assertThat(lease).isNotNull();
            lease.release().block(STEP);
            // the release deleted the owner's node only: the lock's node stays for the next use
            assertThat(zk.nodes()).as("after release %d", i).containsExactly(new ZNodeNames("/").lockPath(name).substring(1));
            assertThat(zk.children(name)).isEmpty();
        }
        // and it is pruned a moment later (LockNodeJanitor.PRUNE_DELAY)
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).isEmpty());
    }

    @Test
    void aHundredWaitersAreHandedTheLockWithOneWatchFiredPerHandOver() {
        String name = "herd-" + UUID.randomUUID();
        List<LockClient> cs = List.of(client(), client(), client(), client());
        Lease first = cs.get(0).acquire(name).block(STEP);
        MutualExclusionChecker checker = new MutualExclusionChecker();
        AtomicInteger done = new AtomicInteger();
        int waiters = 100;
        List<Mono<Void>> all = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            all.add(cs.get(i % cs.size()).withLock(name, lease -> {
                MutualExclusionChecker.Hold h = checker.begin(name, lease.owner(), lease.token());
                return Mono.fromRunnable(() -> {
                    done.incrementAndGet();
                    h.end();
                }).then();
            }));
        }
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Disposable running = Flux.merge(all).subscribe(null, failed::set);
        try {
            // everyone is in line and watches its predecessor before the first hand-over
            await().atMost(STEP).until(() -> zk.children(name).size() == waiters + 1);
            await().atMost(STEP).until(() -> sum(b -> b.stats().predecessorWatches()) == waiters);
            assertThat(sum(b -> b.stats().predecessorWatchEvents())).isZero();

            first.release().block(STEP);
            await().atMost(Duration.ofSeconds(60)).until(() -> done.get() == waiters || failed.get() != null);
            assertThat(failed.get()).isNull();
        } finally {
            running.dispose();
        }
        checker.assertNoOverlap();
        checker.assertTokensStrictlyIncreasing(name);
        // a children watch on the lock would have fired ~waiters²/2 times; the predecessor watch fires once per hand-over
        assertThat(sum(b -> b.stats().predecessorWatchEvents())).as("watch events").isEqualTo(waiters);
        // (a reconnection would add a look and a watch per waiter, never a herd)
        assertThat(sum(b -> b.stats().queueChecks())).as("listings after a wake-up").isBetween((long) waiters, 2L * waiters);
        assertThat(sum(b -> b.stats().predecessorWatches())).as("watches set").isBetween((long) waiters, 2L * waiters);
    }

    @Test
    void aWaiterThatGivesUpWakesOnlyItsSuccessorWhichThenWatchesTheOneBefore() {
        String name = "leave-" + UUID.randomUUID();
        LockClient c = client();
        ZooKeeperLockBackend backend = backends.get(0);
        Lease holder = c.acquire(name).block(STEP);
        List<AtomicReference<Lease>> got = new ArrayList<>();
        List<Disposable> waiting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            AtomicReference<Lease> ref = new AtomicReference<>();
            got.add(ref);
            waiting.add(c.acquire(name).subscribe(ref::set));
            int entries = i + 2;
            await().atMost(STEP).until(() -> zk.children(name).size() == entries); // in this order
        }
        await().atMost(STEP).until(() -> backend.stats().predecessorWatches() == 3);

        waiting.get(1).dispose(); // the middle one leaves: only the last one wakes, and watches the first waiter
        await().atMost(STEP).until(() -> backend.stats().predecessorWatches() == 4);
        assertThat(backend.stats().predecessorWatchEvents()).isEqualTo(1);
        assertThat(zk.children(name)).hasSize(3);
        assertThat(got).allSatisfy(r -> assertThat(r.get()).isNull());

        holder.release().block(STEP);
        await().atMost(STEP).until(() -> got.get(0).get() != null);
        assertThat(got.get(2).get()).isNull();
        got.get(0).get().release().block(STEP);
        await().atMost(STEP).until(() -> got.get(2).get() != null);
        assertThat(got.get(2).get().token()).isGreaterThan(got.get(0).get().token());
        assertThat(backend.stats().predecessorWatchEvents()).isEqualTo(3);
        got.get(2).get().release().block(STEP);
        waiting.forEach(Disposable::dispose);
    }
}
