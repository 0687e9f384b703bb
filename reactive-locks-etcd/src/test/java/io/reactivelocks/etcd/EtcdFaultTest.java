package io.reactivelocks.etcd;

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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A holder whose etcd freezes, dies or is cut off: its hold streams must end before any other
 * client (with its own connection and session) is granted the lock; and a queue of waiters must
 * be handed the lock one by one, each handoff waking exactly one waiter.
 */
class EtcdFaultTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(2))
            .requestTimeout(Duration.ofSeconds(1))
            .drift(0.05, Duration.ofMillis(20))
            .build();

    private static EtcdTestSupport etcd;
    private final List<LockClient> clients = new ArrayList<>();
    private EtcdLockBackend aBackend;
    private EtcdLockBackend bBackend;
    private LockClient a;
    private LockClient b;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @BeforeEach
    void clients() {
        // a talks through a fault proxy, b directly
        aBackend = etcd.proxiedBackend();
        bBackend = etcd.backend();
        a = client(aBackend);
        b = client(bBackend);
    }

    private LockClient client(EtcdLockBackend backend) {
        LockClient c = LockClient.create(backend, OPTIONS);
        clients.add(c);
        return c;
    }

    @AfterEach
    void closeClients() {
        etcd.server.resume();
        etcd.proxyOf(aBackend).heal();
        for (LockClient c : clients) {
            c.close().onErrorResume(e -> Mono.empty()).block(STEP);
        }
        clients.clear();
        etcd.closeProxies();
        await().atMost(STEP).untilAsserted(() -> assertThat(etcd.keys()).as("keys left").isEmpty());
    }

    private static String name(String p) {
        return p + "-" + UUID.randomUUID();
    }

    private String range(String name) {
        return etcd.prefix + "/" + EtcdKeys.encode(name) + "/";
    }

    /** A hold of {@code name} by {@code c}, recording its leases and when it ended (-1: errored). */
    private record Hold(Disposable subscription, List<Lease> updates, AtomicLong ended) {
        static Hold of(LockClient c, String name) {
            List<Lease> updates = new CopyOnWriteArrayList<>();
            AtomicLong ended = new AtomicLong();
            Disposable d = c.hold(name).subscribe(updates::add, e -> ended.set(-1), () -> ended.set(System.nanoTime()));
            return new Hold(d, updates, ended);
        }
    }

    /** A waiting acquire, recording its lease and when it arrived. */
    private record Waiter(Disposable subscription, AtomicReference<Lease> lease, AtomicLong grantedAt) {
        static Waiter of(LockClient c, String name) {
            AtomicReference<Lease> lease = new AtomicReference<>();
            AtomicLong at = new AtomicLong();
            Disposable d = c.acquire(name).subscribe(l -> {
                at.set(System.nanoTime());
                lease.set(l);
            });
            return new Waiter(d, lease, at);
        }
    }

    @Test
    void etcdFrozenLongerThanTheSessionTtlEndsTheHoldBeforeAnotherClientIsGranted() {
        String name = name("sigstop");
        Hold hold = Hold.of(a, name);
        Waiter waiter = null;
        try {
            await().atMost(STEP).until(() -> hold.updates().size() >= 2); // granted and renewed once
            waiter = Waiter.of(b, name);
            await().atMost(STEP).until(() -> etcd.keys(range(name)).size() == 2); // b queued behind a
            EtcdCalls bCalls = etcd.callsOf(bBackend);
            int bLost = bCalls.revoked().size();
            etcd.server.pause();
            await().atMost(STEP).until(() -> hold.ended().get() != 0);
            assertThat(hold.ended().get()).as("the hold stream completed, not errored").isPositive();
            // frozen past the TTL: every session, b's too, is lost on the client side
            await().atMost(STEP).until(() -> bCalls.revoked().size() > bLost); // a lost session revokes its lease
            etcd.server.resume();
            Waiter w = waiter;
            await().atMost(Duration.ofSeconds(20)).until(() -> w.lease().get() != null);
            assertThat(hold.ended().get()).as("a's hold ended before b's grant").isLessThan(w.grantedAt().get());
            assertThat(w.lease().get().token()).isGreaterThan(hold.updates().get(0).token());
            w.lease().get().release().block(STEP);
        } finally {
            hold.subscription().dispose();
            if (waiter != null) {
                waiter.subscription().dispose();
            }
        }
    }

    @Test
    void etcdKilledAndRestartedEndsTheHoldAndKeepsTokensIncreasing() {
        String name = name("kill");
        Hold hold = Hold.of(b, name);
        try {
            await().atMost(STEP).until(() -> !hold.updates().isEmpty());
            long firstToken = hold.updates().get(0).token();
            etcd.server.kill();
            await().atMost(STEP).until(() -> hold.ended().get() != 0);
            assertThat(hold.ended().get()).as("the hold stream completed, not errored").isPositive();
            assertThat(hold.updates().get(hold.updates().size() - 1).isValid()).isFalse();
            etcd.server.restart();
            // the revision survives the restart: the next holder's token is larger
            Lease next = a.acquire(name).block(Duration.ofSeconds(30));
            assertThat(next).isNotNull();
            assertThat(next.token()).isGreaterThan(firstToken);
            assertThat(hold.ended().get()).isPositive();
            next.release().block(STEP);
            // and the client that lost its session takes locks again, on a new session
            Lease again = b.acquire(name).block(Duration.ofSeconds(30));
            assertThat(again.token()).isGreaterThan(next.token());
            assertThat(etcd.callsOf(bBackend).granted()).as("session leases granted to b").hasSizeGreaterThanOrEqualTo(2);
            again.release().block(STEP);
        } finally {
            hold.subscription().dispose();
        }
    }

    @Test
    void aPartitionedClientsHoldsEndBeforeAnotherClientIsGranted() {
        String[] names = {name("partition-1"), name("partition-2"), name("partition-3")};
        List<Hold> holds = new ArrayList<>();
        List<Waiter> waiters = new ArrayList<>();
        try {
            for (String n : names) {
                holds.add(Hold.of(a, n));
            }
            await().atMost(STEP).until(() -> holds.stream().allMatch(h -> !h.updates().isEmpty()));
            for (String n : names) {
                waiters.add(Waiter.of(b, n));
            }
            for (String n : names) {
                await().atMost(STEP).until(() -> etcd.keys(range(n)).size() == 2);
            }
            etcd.proxyOf(aBackend).blackhole(); // and never healed during the test
            for (Waiter w : waiters) {
                await().atMost(Duration.ofSeconds(20)).until(() -> w.lease().get() != null);
            }
            for (int i = 0; i < names.length; i++) {
                Hold h = holds.get(i);
                Waiter w = waiters.get(i);
                assertThat(h.ended().get()).as("hold %d completed, not errored", i).isPositive();
                assertThat(h.ended().get()).as("hold %d ended before the other client's grant", i).isLessThan(w.grantedAt().get());
                assertThat(w.lease().get().token()).isGreaterThan(h.updates().get(0).token());
            }
            // one session: all of a's holds ended together, when it was lost
            long first = holds.stream().mapToLong(h -> h.ended().get()).min().orElseThrow();
            long last = holds.stream().mapToLong(h -> h.ended().get()).max().orElseThrow();
            assertThat(TimeUnit.NANOSECONDS.toMillis(last - first)).as("spread of the ends of a's holds (ms)").isLessThan(500);
            for (Waiter w : waiters) {
                w.lease().get().release().block(STEP);
            }
        } finally {
            holds.forEach(h -> h.subscription().dispose());
            waiters.forEach(w -> w.subscription().dispose());
        }
    }

    @Test
    void aRevokedSessionEndsEveryHoldAtOnceAndTheNextAcquireGetsANewSession() throws Exception {
        List<String> names = List.of(name("revoked-1"), name("revoked-2"), name("revoked-3"), name("revoked-4"));
        List<Hold> holds = new ArrayList<>();
        try {
            for (String n : names) {
                holds.add(Hold.of(b, n));
            }
            await().atMost(STEP).until(() -> holds.stream().allMatch(h -> !h.updates().isEmpty()));
            long lease = etcd.callsOf(bBackend).liveLease().orElseThrow();
            etcd.checker().getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
            // the next keep-alive hears "lease not found": every hold stream completes
            await().atMost(STEP).until(() -> holds.stream().allMatch(h -> h.ended().get() != 0));
            assertThat(holds).allSatisfy(h -> assertThat(h.ended().get()).isPositive());
            assertThat(etcd.keys()).isEmpty();
            Lease again = b.acquire(names.get(0)).block(STEP);
            assertThat(etcd.callsOf(bBackend).liveLease()).isPresent().isNotEqualTo(java.util.OptionalLong.of(lease));
            assertThat(again.token()).isGreaterThan(holds.get(0).updates().get(0).token());
            again.release().block(STEP);
        } finally {
            holds.forEach(h -> h.subscription().dispose());
        }
    }

    @Test
    void aHundredWaitersAreHandedTheLockOneByOneEachHandoffWakingOneWaiter() {
        String name = name("herd");
        int waiters = 100;
        List<EtcdLockBackend> backends = new ArrayList<>();
        List<LockClient> waitingClients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            EtcdLockBackend be = etcd.backend();
            backends.add(be);
            waitingClients.add(client(be));
        }
        Lease first = a.acquire(name).block(STEP);
        MutualExclusionChecker checker = new MutualExclusionChecker();
        AtomicInteger done = new AtomicInteger();
        List<Mono<Integer>> all = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            LockClient c = waitingClients.get(i % waitingClients.size());
            all.add(c.withLock(name, lease -> {
                MutualExclusionChecker.Hold h = checker.begin(name, lease.owner(), lease.token());
                return Mono.fromCallable(done::incrementAndGet).doFinally(s -> h.end());
            }));
        }
        AtomicReference<List<Integer>> results = new AtomicReference<>();
        Disposable running = Flux.merge(all).collectList().subscribe(results::set);
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> etcd.keys(range(name)).size() == waiters + 1);
            // each waiter read its place once when it queued
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> backends.stream().mapToLong(b -> etcd.callsOf(b).readTransactions()).sum() == waiters);
            long readsBefore = backends.stream().mapToLong(b -> etcd.callsOf(b).readTransactions()).sum();
            long eventsBefore = backends.stream().mapToLong(b -> etcd.callsOf(b).watchEvents()).sum();
            first.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).until(() -> results.get() != null);
            assertThat(done).hasValue(waiters);
            checker.assertNoOverlap();
            checker.assertTokensStrictlyIncreasing(name);
            // each of the 100 handoffs (a → w1 → ... → w100) made at most one waiter look at its place again (one read),
            // or none when the waiter's predecessor was known first (granted by the same backend): a herd would make
            // every waiter behind look on each handoff, thousands of reads
            long reads = backends.stream().mapToLong(b -> etcd.callsOf(b).readTransactions()).sum() - readsBefore;
            assertThat(reads).as("reads by waiters woken").isLessThanOrEqualTo(waiters);
            // and a deletion reaches each client once (its one watch of deletions), plus at most once more the waiter
            // that watches its predecessor itself while that watch catches up: not once per waiter behind
            long events = backends.stream().mapToLong(b -> etcd.callsOf(b).watchEvents()).sum() - eventsBefore;
            assertThat(events).as("watch events received by the waiting clients")
                    .isLessThanOrEqualTo((backends.size() + 1L) * (waiters + 1));
            assertThat(etcd.keys(range(name))).isEmpty();
        } finally {
            running.dispose();
        }
    }
}
