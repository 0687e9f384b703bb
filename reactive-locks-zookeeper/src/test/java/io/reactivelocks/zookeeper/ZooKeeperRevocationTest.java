package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Revocation requests on ZooKeeper: written into the lock's revocation node {@code <root>/r-<name>},
 * reported by the watch of each events stream that watches when they are written — once each, never
 * the old request a new stream finds, not lost to the creates that bump the lock's node — while the
 * lock nodes (queue, payload) stay as they are and nothing is left but the revocation nodes.
 */
class ZooKeeperRevocationTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static ZooKeeperTestSupport zk;
    private final List<ZooKeeperLockBackend> backends = new ArrayList<>();
    private final List<LockClient> clients = new ArrayList<>();
    private final List<Disposable> streams = new ArrayList<>();

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
    void closeAndCheckNothingLeft() {
        streams.forEach(Disposable::dispose);
        for (LockClient c : clients) {
            c.close().block(STEP);
        }
        for (ZooKeeperLockBackend b : backends) {
            b.close().block(STEP);
        }
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).as("znodes left beside the revocation nodes")
                .allMatch(p -> p.startsWith("/" + ZNodeNames.REVOCATION_PREFIX) && p.indexOf('/', 1) < 0));
    }

    private static String revocationNode(String name) {
        return new ZNodeNames("").revocationPath(name);
    }

    private LockClient client() {
        LockClient c = LockClient.create(zk.backend(), LockOptions.builder().leaseTime(ZooKeeperTestSupport.SESSION)
                .requestTimeout(Duration.ofSeconds(5)).build());
        clients.add(c);
        return c;
    }

    private ZooKeeperLockBackend backend() {
        ZooKeeperLockBackend b = zk.backend();
        backends.add(b);
        return b;
    }

    private List<LockEvent> watch(ZooKeeperLockBackend b, String name) {
        List<LockEvent> seen = Collections.synchronizedList(new ArrayList<>());
        streams.add(b.events(name).subscribe(seen::add));
        await().atMost(STEP).until(() -> seen.contains(new LockEvent.Subscribed(name)));
        return seen;
    }

    private static List<LockEvent> revocations(List<LockEvent> seen) {
        synchronized (seen) {
            return seen.stream().filter(e -> e instanceof LockEvent.Revoked).toList();
        }
    }

    @Test
    void aRequestReachesEachWatchingStreamOnceAndLeavesTheQueueAndThePayloadAlone() throws Exception {
        String name = "revoke-" + UUID.randomUUID();
        ZooKeeperLockBackend holderSide = zk.backend();
        backends.add(holderSide);
        LockClient holderClient = LockClient.create(holderSide, LockOptions.builder().leaseTime(ZooKeeperTestSupport.SESSION)
                .requestTimeout(Duration.ofSeconds(5)).build());
        clients.add(holderClient);
        Lease held = holderClient.acquire(name).block(STEP);
        HeldLock lock = new HeldLock(name, held.owner(), held.token());
        assertThat(holderSide.updatePayload(lock, "job 42").block(STEP)).isTrue();
        ZooKeeperLockBackend asker = backend();
        List<LockEvent> seen = watch(asker, name);

        String reason = "drain: 3:x\n\u00fc"; // the separator and a newline in the reason
        asker.revoke(name, held.owner(), reason).block(STEP); // once: a subscribed stream sees it
        LockEvent.Revoked asked = new LockEvent.Revoked(name, held.owner(), reason);
        await().atMost(STEP).until(() -> seen.contains(asked));

        Holder holder = asker.inspect(name).block(STEP);
        assertThat(holder.token()).isEqualTo(held.token());
        assertThat(holder.payload()).as("the payload stays in the holder's node").isEqualTo("job 42");
        assertThat(asker.waiting(name).block(STEP)).isZero();
        assertThat(zk.children(name)).hasSize(1);
        assertThat(held.isValid()).isTrue();

        // a payload update is no request; a stream that starts later does not report the old request
        assertThat(holderSide.updatePayload(lock, "job 43").block(STEP)).isTrue();
        List<LockEvent> later = watch(asker, name);
        assertThat(asker.inspect(name).block(STEP).payload()).isEqualTo("job 43");
        asker.revoke(name, held.owner(), "again").block(STEP);
        LockEvent.Revoked again = new LockEvent.Revoked(name, held.owner(), "again");
        await().atMost(STEP).until(() -> seen.contains(again) && later.contains(again));
        assertThat(revocations(seen)).containsExactly(asked, again);
        assertThat(revocations(later)).containsExactly(again);

        held.release().block(STEP);
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).as("the lock's node pruned, its revocation node left")
                .containsExactly(revocationNode(name)));
        assertThat(asker.revoke(name, held.owner(), "late").then().block(STEP)).isNull();
        assertThat(LockNodes.revoked(name, zk.checker().getData().forPath(zk.root + revocationNode(name))))
                .as("a free lock's holder is not asked").isEqualTo(again);
        String free = "revoke-free-" + UUID.randomUUID();
        assertThat(asker.revoke(free, "someone", "free").then().block(STEP)).isNull();
        assertThat(zk.nodes()).as("a free lock's nodes are not created by a request").containsExactly(revocationNode(name));
    }

    /**
     * Each create bumps the lock node's data version by a {@code setData} on it: a request written
     * right before an acquire and release (sent at once after it on the same connection, so the
     * create is written before a stream can read the request) is still reported (the requests live in a node of their
     * own). Each round waits for its request before the next is written: two requests written before
     * a stream reads the first are reported as the last one.
     */
    @Test
    void everyRequestIsReportedThoughAnAcquireRightAfterItBumpsTheLockNode() throws Exception {
        String name = "revoke-bumped-" + UUID.randomUUID();
        String pin = zk.root + new ZNodeNames("").lockPath(name) + "/pin";
        zk.checker().create().creatingParentContainersIfNeeded().forPath(pin); // no lock node: the lock's node stays
        ZooKeeperLockBackend watcher = backend();
        ZooKeeperLockBackend asker = backend();
        LockClient locks = LockClient.create(asker, LockOptions.builder().leaseTime(ZooKeeperTestSupport.SESSION)
                .requestTimeout(Duration.ofSeconds(5)).build());
        clients.add(locks);
        List<LockEvent> seen = watch(watcher, name);
        int rounds = 30;
        List<LockEvent.Revoked> asked = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            LockEvent.Revoked request = new LockEvent.Revoked(name, "owner-" + i, "reason " + i);
            asked.add(request);
            // sent one right after the other on one connection: the create lands before the stream reads
            Mono.when(asker.revoke(name, request.owner(), request.reason()), locks.acquire(name).flatMap(Lease::release))
                    .block(STEP);
            await("request " + i).atMost(STEP).until(() -> revocations(seen).contains(request));
        }
        assertThat(revocations(seen)).containsExactlyElementsOf(asked);
        zk.checker().delete().forPath(pin);
    }

    @Test
    void aStreamReportsARequestOnTheLockNodeMadeAgainAfterAPrune() {
        String name = "revoke-again-" + UUID.randomUUID();
        LockClient locks = client();
        ZooKeeperLockBackend asker = backend();
        List<LockEvent> seen = watch(asker, name);
        Lease first = locks.acquire(name).block(STEP);
        first.release().block(STEP);
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).as("the lock's node pruned")
                .noneMatch(p -> p.startsWith(new ZNodeNames("").lockPath(name))));

        Lease second = locks.acquire(name).block(STEP);
        LockEvent.Revoked asked = new LockEvent.Revoked(name, second.owner(), "for the second");
        await().atMost(STEP).until(() -> seen.stream().anyMatch(e -> e instanceof LockEvent.Acquired));
        asker.revoke(name, second.owner(), "for the second").block(STEP);
        await().atMost(STEP).until(() -> seen.contains(asked));
        assertThat(revocations(seen)).containsExactly(asked);
        second.release().block(STEP);
    }

    /**
     * Requests to two permits of a semaphore, written one right after the other (the data watch
     * fires once), are both reported once; a request written before the stream is not; the permit
     * nodes and the holders stay as they are, and the entry of a released permit is dropped by the
     * next request.
     */
    @Test
    void permitRequestsInQuickSuccessionAreEachReportedOnceAndLeaveThePermitsAlone() throws Exception {
        String name = "revoke-permits-" + UUID.randomUUID();
        String root = zk.root + "-semaphore";
        ZooKeeperSemaphoreStore holders = new ZooKeeperSemaphoreStore(
                ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION), true, root, zk.options().acl());
        ZooKeeperSemaphoreStore asker = new ZooKeeperSemaphoreStore(
                ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION), true, root, zk.options().acl());
        try {
            Duration lease = Duration.ofSeconds(10);
            for (String o : List.of("permit-a", "permit-b")) {
                assertThat(holders.tryGrant(name, List.of(o), 2, lease).block(STEP))
                        .isInstanceOf(io.reactivelocks.spi.semaphore.PermitGrant.Granted.class);
            }
            asker.revoke(name, "permit-a", "before the stream").block(STEP);
            List<LockEvent> seen = Collections.synchronizedList(new ArrayList<>());
            streams.add(asker.events(name).subscribe(seen::add));
            await().atMost(STEP).until(() -> seen.contains(new LockEvent.Subscribed(name)));

            asker.revoke(name, "permit-a", "first").then(asker.revoke(name, "permit-b", "second")).block(STEP);
            LockEvent.Revoked first = new LockEvent.Revoked(name, "permit-a", "first");
            LockEvent.Revoked second = new LockEvent.Revoked(name, "permit-b", "second");
            await().atMost(STEP).until(() -> seen.containsAll(List.of(first, second)));
            assertThat(holders.holders(name).block(STEP)).extracting(Holder::owner).containsExactlyInAnyOrder("permit-a", "permit-b");
            assertThat(zk.checker().getChildren().forPath(asker.path(name))).hasSize(2);
            synchronized (seen) {
                assertThat(seen).as("a request is no change of the children").noneMatch(e -> e instanceof LockEvent.Released);
            }

            assertThat(holders.release(name, "permit-b").block(STEP)).isTrue();
            asker.revoke(name, "permit-a", "third").block(STEP);
            LockEvent.Revoked third = new LockEvent.Revoked(name, "permit-a", "third");
            await().atMost(STEP).until(() -> seen.contains(third));
            assertThat(revocations(seen)).containsExactly(first, second, third);
            assertThat(GrantRevocations.decode(zk.checker().getData().forPath(asker.revocationPath(name))))
                    .as("one entry per owner still holding").extracting(e -> e.owner()).containsExactly("permit-a");
            assertThat(holders.release(name, "permit-a").block(STEP)).isTrue();
        } finally {
            holders.close().block(STEP);
            asker.close().block(STEP);
        }
    }

    /**
     * A read-write lock's requests live in its revocation node {@code <root>-rw/r-<base64url(name)>}:
     * a reader granted by the one-transaction create (no listing) is asked by a request that creates
     * that node while a stream watches (an exists watch) and is reported; the name's node's data and
     * version stay as the grants left them; a name with no node gets no request and no revocation node.
     */
    @Test
    void aReadWriteRequestAfterAFastGrantIsReportedAndLeavesTheNamesNodeAlone() throws Exception {
        String name = "revoke-rw-" + UUID.randomUUID();
        String root = zk.root + "-rw";
        ZooKeeperReadWriteStore holders = new ZooKeeperReadWriteStore(
                ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION), true, root, zk.options().acl());
        ZooKeeperReadWriteStore asker = new ZooKeeperReadWriteStore(
                ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION), true, root, zk.options().acl());
        try {
            Duration lease = Duration.ofSeconds(10);
            assertThat(asker.revoke(name, "reader", "no node").then().block(STEP)).isNull();
            assertThat(zk.checker().checkExists().forPath(asker.revocationPath(name))).as("no request without a node").isNull();

            List<LockEvent> seen = Collections.synchronizedList(new ArrayList<>());
            streams.add(asker.events(name).subscribe(seen::add));
            await().atMost(STEP).until(() -> seen.contains(new LockEvent.Subscribed(name)));
            assertThat(holders.tryGrant(name, "reader", LockMode.READ, true, true, lease).block(STEP))
                    .isInstanceOf(io.reactivelocks.spi.semaphore.PermitGrant.Granted.class);
            Stat before = zk.checker().checkExists().forPath(asker.path(name));

            asker.revoke(name, "reader", "first").block(STEP); // creates the revocation node
            LockEvent.Revoked first = new LockEvent.Revoked(name, "reader", "first");
            await().atMost(STEP).until(() -> seen.contains(first));
            asker.revoke(name, "reader", "second").block(STEP);
            LockEvent.Revoked second = new LockEvent.Revoked(name, "reader", "second");
            await().atMost(STEP).until(() -> seen.contains(second));
            assertThat(revocations(seen)).containsExactly(first, second);

            Stat after = zk.checker().checkExists().forPath(asker.path(name));
            assertThat(after.getVersion()).as("the name's node's data version").isEqualTo(before.getVersion());
            assertThat(after.getMzxid()).isEqualTo(before.getMzxid());
            assertThat(zk.checker().getData().forPath(asker.path(name))).as("the name's node's data").isEmpty();
            assertThat(GrantRevocations.decode(zk.checker().getData().forPath(asker.revocationPath(name))))
                    .extracting(e -> e.owner()).containsExactly("reader");
            assertThat(holders.holders(name).block(STEP).readers()).extracting(Holder::owner).containsExactly("reader");
            assertThat(holders.release(name, "reader").block(STEP)).isTrue();
            assertThat(zk.checker().getChildren().forPath(asker.path(name))).as("nodes left under the name's node").isEmpty();
        } finally {
            holders.close().block(STEP);
            asker.close().block(STEP);
        }
    }
}
