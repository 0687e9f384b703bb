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
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
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

    /**
     * Two requests per pair once the client knows the lock free (the version-guarded create, a
     * {@code multi}, proves its node first: no listing; then the delete), counted by the server
     * ({@code mntr}); the lock's node is pruned once, when the name is left alone, never while it is
     * used (a prune fires only after a gap of a whole prune delay between two releases: the deletes
     * of the lock's node the client sent are counted by its {@link CuratorCalls}).
     */
    @Test
    void aNameInUseCostsTwoRequestsPerPairAndIsPrunedOnlyOnceLeftAlone() {
        String name = "busy-" + UUID.randomUUID();
        LockClient c = client();
        ZooKeeperLockBackend b = backends.get(backends.size() - 1);
        c.acquire(name).block(STEP).release().block(STEP); // creates the lock's node
        CuratorCalls calls = ZooKeeperTestSupport.callsOf(b);
        String lockPath = new ZNodeNames(zk.root).lockPath(name);
        long prunesBefore = calls.deletesOf(lockPath);
        long delay = LockNodeJanitor.PRUNE_DELAY.toNanos();
        long before = packetsReceived();
        long start = System.nanoTime();
        long last = start;
        int pairs = 0;
        int longGaps = 0;
        long lastToken = 0;
        // for a few prune delays (bounded by count on a slow machine)
        while (pairs < 3000 && System.nanoTime() - start < 3 * delay) {
            Lease lease = c.acquire(name).block(STEP);
            assertThat(lease.token()).isGreaterThan(lastToken);
            lastToken = lease.token();
            lease.release().block(STEP);
            long now = System.nanoTime();
            if (now - last >= delay * 4 / 5) {
                longGaps++;
            }
            last = now;
            pairs++;
        }
        long requests = packetsReceived() - before;
        long prunes = calls.deletesOf(lockPath) - prunesBefore;
        assertThat(prunes).as("prunes while in use (%d long gaps)", longGaps).isLessThanOrEqualTo(longGaps);
        // each prune may cost the next acquire its refused multi, a container create, a second multi and a listing;
        // plus pings and the counter read
        assertThat(requests).as("requests for %d pairs", pairs).isBetween(2L * pairs, 2L * pairs + 3 * prunes + 6);
        // the node goes by our prune, or earlier by the server's container manager (its check every minute may fall
        // between the last release and our prune, which then meets no node): wait for our prune's answer either way
        await().atMost(STEP).untilAsserted(() -> {
            assertThat(zk.nodes()).isEmpty();
            assertThat(calls.deletesOf(lockPath) - prunesBefore).as("prunes sent").isGreaterThan(prunes);
        });
        assertThat(calls.deletesOf(lockPath) - prunesBefore).as("prunes sent").isEqualTo(prunes + 1);
    }

    /**
     * Waiters of one client queued one after another: each one's predecessor was first when it
     * queued (the holder) or was granted by the same client, so its deletion alone makes the
     * waiter first — a hand-over is the release's delete, no listing (counted by the server, with
     * a spare for pings; and no read at all under the fixture's root: a listing would be one). The session is 9 s here (the server's most): a grant without a listing
     * is timed from the waiter's watch request, used only while that is younger than a third of it.
     */
    @Test
    void aHandOverWithinOneClientIsOneRequest() {
        String name = "handoff-" + UUID.randomUUID();
        Duration session = Duration.ofSeconds(9);
        ZooKeeperLockBackend b = ZooKeeperTestSupport.owning(ZooKeeperTestSupport.curator(zk.server.connectString(), session),
                zk.options());
        backends.add(b);
        LockClient c = LockClient.create(b, LockOptions.builder().leaseTime(session).requestTimeout(Duration.ofSeconds(5)).build());
        clients.add(c);
        int waiters = 6;
        Lease holder = c.acquire(name).block(STEP);
        List<Long> tokens = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicInteger done = new AtomicInteger();
        List<Disposable> waits = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            waits.add(c.acquire(name).flatMap(l -> {
                tokens.add(l.token());
                return l.release();
            }).subscribe(null, e -> { }, done::incrementAndGet));
            long watches = i + 1;
            await().atMost(STEP).pollInterval(Duration.ofMillis(10))
                    .until(() -> zk.watchCountOnQueueOf(name) == watches); // in this order
        }
        long readsBefore = zk.readsUnderRoot();
        assertThat(readsBefore).as("reads under the root so far (the waiters' listings and watches)").isPositive();
        long before = packetsReceived();
        holder.release().block(STEP);
        await().atMost(STEP).until(() -> done.get() == waiters);
        long requests = packetsReceived() - before - 1; // the mntr itself
        waits.forEach(Disposable::dispose);
        // every waiter granted on its predecessor's deletion alone: no listing (nor any other read) after a wake-up
        assertThat(zk.readsUnderRoot() - readsBefore).as("reads during %d hand-overs", waiters).isZero();
        assertThat(requests).as("requests for %d hand-overs", waiters).isBetween((long) waiters, waiters + 3L);
        assertThat(tokens).hasSize(waiters).isSorted().doesNotHaveDuplicates();
        assertThat(tokens.get(0)).isGreaterThan(holder.token());
    }

    /** @return the nodes in the lock's queue, by sequence: the holder's first */
    private static List<String> inLine(String name) {
        return zk.children(name).stream().map(ZNodeNames::parse).sorted(ZNodeNames.BY_SEQUENCE).map(ZNodeNames.Child::node).toList();
    }

    private static long packetsReceived() {
        long n = zk.mntr("zk_packets_received");
        if (n == 0) {
            throw new IllegalStateException("no zk_packets_received in mntr");
        }
        return n;
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
        long firedBefore = zk.deletionWatchesFired();
        AtomicLong readsBefore = new AtomicLong();
        Disposable running = Flux.merge(all).subscribe(null, failed::set);
        try {
            // everyone is in line and watches its predecessor before the first hand-over
            await().atMost(STEP).until(() -> zk.children(name).size() == waiters + 1);
            await().atMost(STEP).until(() -> zk.watchCountOnQueueOf(name) == waiters);
            assertThat(zk.watchesOnQueueOf(name)).as("one watch per node but the last").hasSize(waiters)
                    .allSatisfy((node, sessions) -> assertThat(sessions).hasSize(1));
            assertThat(zk.deletionWatchesFired() - firedBefore).isZero();
            readsBefore.set(zk.readsUnderRoot());
            assertThat(readsBefore.get()).as("reads under the root so far (the waiters' listings and watches)").isPositive();

            first.release().block(STEP);
            await().atMost(Duration.ofSeconds(60)).until(() -> done.get() == waiters || failed.get() != null);
            assertThat(failed.get()).isNull();
        } finally {
            running.dispose();
        }
        checker.assertNoOverlap();
        checker.assertTokensStrictlyIncreasing(name);
        // a children watch on the lock would have fired ~waiters²/2 times; the predecessor watch fires once per hand-over
        assertThat(zk.deletionWatchesFired() - firedBefore).as("watch events").isEqualTo(waiters);
        // (a reconnection would add a look and a watch per waiter, never a herd)
        // each wake-up lists the children again (one read), unless the predecessor is known to have been first
        // (then none), and may watch a new predecessor (one read): a herd would read ~waiters²/2 times
        assertThat(zk.readsUnderRoot() - readsBefore.get()).as("listings and watches set after the first hand-over")
                .isLessThanOrEqualTo(2L * waiters);
        await().atMost(STEP).until(() -> zk.watchCountOnQueueOf(name) == 0); // every watch fired or removed
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
        List<String> queue = inLine(name); // the holder, then the three waiters
        long session = ZooKeeperTestSupport.callsOf(backend).sessionId();
        await().atMost(STEP).until(() -> zk.watchesOnQueueOf(name).equals(Map.of(
                queue.get(0), List.of(session), queue.get(1), List.of(session), queue.get(2), List.of(session))));
        long firedBefore = zk.deletionWatchesFired();

        waiting.get(1).dispose(); // the middle one leaves: only the last one wakes, and watches the first waiter
        await().atMost(STEP).until(() -> zk.watchesOnQueueOf(name).equals(Map.of(
                queue.get(0), List.of(session), queue.get(1), List.of(session))));
        assertThat(zk.deletionWatchesFired() - firedBefore).as("watches fired").isEqualTo(1);
        assertThat(zk.children(name)).hasSize(3);
        assertThat(got).allSatisfy(r -> assertThat(r.get()).isNull());

        holder.release().block(STEP);
        await().atMost(STEP).until(() -> got.get(0).get() != null);
        assertThat(got.get(2).get()).isNull();
        got.get(0).get().release().block(STEP);
        await().atMost(STEP).until(() -> got.get(2).get() != null);
        assertThat(got.get(2).get().token()).isGreaterThan(got.get(0).get().token());
        assertThat(zk.deletionWatchesFired() - firedBefore).as("watches fired").isEqualTo(3);
        got.get(2).get().release().block(STEP);
        waiting.forEach(Disposable::dispose);
    }
}
