package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.multi.MultiLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The contract every store passes for {@link MultiLock}: sets of locks taken all or nothing, in
 * canonical order, on real servers. A store's test extends this class and supplies
 * {@link #newBackend()}: each call must return an independent backend (its own connections) to
 * the same store, so that clients contend as separate processes would. What a client holds is
 * checked from another client ({@link LockBackend#inspect}, {@link LockClient#observe}), and after
 * each test nothing of the test's names may be left on the store.
 */
public abstract class MultiLockContract {

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);

    private final List<TestClient> clients = new ArrayList<>();
    private final Set<String> names = Collections.synchronizedSet(new LinkedHashSet<>());
    private LockBackend checker;

    /** @return a new, independent backend (its own connections) to the store under test */
    protected abstract LockBackend newBackend();

    /** @return options for the tests: short lease and request timeout, a drift allowance for a loaded machine */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofMillis(1200))
                .requestTimeout(Duration.ofSeconds(2))
                .drift(0.05, Duration.ofMillis(20))
                .build();
    }

    /** A client under test: its lock client, its multi-lock and the fault switch of its backend. */
    public record TestClient(LockClient locks, MultiLock multi, FaultInjectingBackend faults) {
    }

    /** @return a new client over {@link #newBackend()} with {@link #options()}, closed after the test */
    protected TestClient newClient() {
        FaultInjectingBackend b = FaultInjectingBackend.wrap(newBackend());
        LockClient locks = LockClient.create(b, options());
        TestClient c = new TestClient(locks, MultiLock.create(locks), b);
        clients.add(c);
        return c;
    }

    /**
     * @param prefix a readable prefix
     * @return a lock name unique to this run, remembered for the after-test check
     */
    protected String name(String prefix) {
        String n = prefix + "-" + UUID.randomUUID();
        names.add(n);
        return n;
    }

    /** @return a backend of its own that only looks (inspect), for checks from outside the clients under test */
    protected LockBackend checker() {
        if (checker == null) {
            checker = newBackend();
        }
        return checker;
    }

    private Holder holderOf(String name) {
        return checker().inspect(name).block(STEP);
    }

    /**
     * Checks that the store holds nothing for {@code names} any more; stores may also scan their key space.
     *
     * @param backend a live backend to ask
     * @param names   every lock name the test used
     */
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        for (String n : names) {
            await().atMost(STEP).untilAsserted(() ->
                    assertThat(backend.inspect(n).blockOptional(STEP)).as("holder of '%s' after the test", n).isEmpty());
        }
    }

    @AfterEach
    void closeClientsAndCheckNothingLeft() {
        for (TestClient c : clients) {
            c.locks().close().block(STEP);
        }
        clients.clear();
        try {
            assertNothingLeft(checker(), names);
        } finally {
            checker.close().block(STEP);
            checker = null;
            names.clear();
        }
    }

    @Test
    void twoCallersWithReversedOrdersBothFinishWithoutOverlap() {
        List<String> set = List.of(name("abba-1"), name("abba-2"), name("abba-3"));
        List<String> reversed = new ArrayList<>(set);
        Collections.reverse(reversed);
        TestClient a = newClient();
        TestClient b = newClient();
        MutualExclusionChecker exclusion = new MutualExclusionChecker();
        AtomicInteger done = new AtomicInteger();
        int rounds = 4;
        List<Mono<Void>> all = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            all.add(a.multi().withLocks(set, s -> underAll(exclusion, s, done)));
            all.add(b.multi().withLocks(reversed, s -> underAll(exclusion, s, done)));
        }
        Flux.merge(Flux.fromIterable(all).map(m -> m.subscribeOn(Schedulers.parallel()))).then().block(Duration.ofSeconds(60));
        assertThat(done).hasValue(2 * rounds);
        exclusion.assertNoOverlap();
        for (String n : set) {
            exclusion.assertTokensStrictlyIncreasing(n);
        }
    }

    /**
     * Three callers, each its own client, take overlapping sets given in different orders — x y z,
     * z y, and w y x — all at the same moment, round after round: every set must be granted within a
     * bounded wait (no two callers may hold a part each and wait for the other's), never two owners
     * inside one name, tokens increasing per name.
     */
    @Test
    void threeCallersWithOverlappingSetsInDifferentOrdersAllFinish() {
        String w = name("ovl-w");
        String x = name("ovl-x");
        String y = name("ovl-y");
        String z = name("ovl-z");
        List<List<String>> sets = List.of(List.of(x, y, z), List.of(z, y), List.of(w, y, x));
        LockOptions bounded = options().mutate().waitTimeout(Duration.ofSeconds(20)).build();
        MutualExclusionChecker exclusion = new MutualExclusionChecker();
        AtomicInteger done = new AtomicInteger();
        int rounds = 5;
        Sinks.Empty<Void> start = Sinks.empty();
        List<Mono<Void>> all = new ArrayList<>();
        for (List<String> set : sets) {
            TestClient c = newClient();
            c.locks().tryAcquire(name("warm-up")).flatMap(Lease::release).block(STEP); // connect first
            all.add(start.asMono().publishOn(Schedulers.parallel()).then(Flux.range(0, rounds)
                    .concatMap(round -> c.multi().withLocks(set, bounded, s -> underAll(exclusion, s, done)))
                    .then()));
        }
        StepVerifier.create(Flux.merge(all).then())
                .then(start::tryEmitEmpty)
                .expectComplete()
                .verify(Duration.ofSeconds(60));
        assertThat(done).hasValue(sets.size() * rounds);
        exclusion.assertNoOverlap();
        for (String n : List.of(w, x, y, z)) {
            exclusion.assertTokensStrictlyIncreasing(n);
        }
    }

    private static Mono<Void> underAll(MutualExclusionChecker exclusion, MultiLease set, AtomicInteger done) {
        List<MutualExclusionChecker.Hold> holds = new ArrayList<>();
        for (Lease l : set.leases()) {
            holds.add(exclusion.begin(l.name(), l.owner(), l.token()));
        }
        Runnable end = () -> holds.forEach(MutualExclusionChecker.Hold::end);
        return Mono.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(1, 10)))
                .doOnNext(x -> done.incrementAndGet())
                .then(Mono.fromRunnable(end))
                .doOnCancel(end)
                .then();
    }

    @Test
    void eachNameHasItsOwnLeaseAndTokenAsTheStoreSeesIt() {
        List<String> set = List.of(name("tok-b"), name("tok-a"), name("tok-c"));
        TestClient a = newClient();
        TestClient b = newClient();
        MultiLease first = a.multi().acquire(set).block(STEP);
        assertThat(first.names()).containsExactlyInAnyOrderElementsOf(set);
        assertThat(first.leases()).extracting(Lease::owner).doesNotHaveDuplicates();
        for (String n : set) {
            Holder h = holderOf(n);
            assertThat(h).as("holder of %s", n).isNotNull();
            assertThat(h.owner()).isEqualTo(first.lease(n).owner());
            assertThat(h.token()).isEqualTo(first.token(n));
        }
        first.release().block(STEP);
        MultiLease second = b.multi().acquire(set).block(STEP);
        for (String n : set) {
            assertThat(second.token(n)).as("token of %s", n).isGreaterThan(first.token(n));
        }
        second.release().block(STEP);
        for (String n : set) {
            assertThat(holderOf(n)).as("%s after release", n).isNull();
        }
    }

    @Test
    void tryAcquireIsAllOrNothing() {
        List<String> set = List.of(name("all-1"), name("all-2"), name("all-3"), name("all-4"));
        TestClient a = newClient();
        TestClient b = newClient();
        String blocked = set.get(2);
        Lease blocker = b.locks().acquire(blocked).block(STEP);
        StepVerifier.create(a.multi().tryAcquire(set)).as("one name is held by b").expectComplete().verify(STEP);
        for (String n : set) {
            Holder h = holderOf(n);
            if (n.equals(blocked)) {
                assertThat(h.owner()).isEqualTo(blocker.owner());
            } else {
                assertThat(h).as("%s after a refused set", n).isNull();
            }
        }
        blocker.release().block(STEP);
        MultiLease won = a.multi().tryAcquire(set).block(STEP);
        assertThat(won).isNotNull();
        assertThat(won.names()).hasSize(4);
        StepVerifier.create(b.multi().tryAcquire(List.of(set.get(0)))).expectComplete().verify(STEP);
        won.release().block(STEP);
    }

    @Test
    void cancelWhileWaitingHalfWayLeavesNothingHeld() {
        List<String> set = new ArrayList<>(List.of(name("half-1"), name("half-2"), name("half-3")));
        List<String> order = MultiLock.canonicalOrder(set);
        TestClient a = newClient();
        TestClient b = newClient();
        TestClient watcher = newClient();
        String last = order.get(2);
        Lease blocker = b.locks().acquire(last).block(STEP);
        List<LockState> seen = Collections.synchronizedList(new ArrayList<>());
        Disposable waiting = a.multi().acquire(set).subscribe();
        Disposable observing = null;
        try {
            await().atMost(STEP).untilAsserted(() -> {
                assertThat(holderOf(order.get(0))).as("first name taken").isNotNull();
                assertThat(holderOf(order.get(1))).as("second name taken").isNotNull();
            });
            assertThat(holderOf(last).owner()).isEqualTo(blocker.owner());
            observing = watcher.locks().observe(order.get(0)).subscribe(seen::add);
            await().atMost(STEP).until(() -> !seen.isEmpty());
            assertThat(seen.get(0).isHeld()).as("another client sees the first name held").isTrue();
            waiting.dispose();
            await().atMost(STEP).untilAsserted(() -> {
                assertThat(holderOf(order.get(0))).as("first name after the cancel").isNull();
                assertThat(holderOf(order.get(1))).as("second name after the cancel").isNull();
            });
            await().atMost(STEP).untilAsserted(() -> assertThat(seen).extracting(LockState::isHeld).containsSubsequence(true, false));
            assertThat(holderOf(last).owner()).as("the blocker is untouched").isEqualTo(blocker.owner());
        } finally {
            if (observing != null) {
                observing.dispose();
            }
            waiting.dispose();
            blocker.release().block(STEP);
        }
    }

    @Test
    void cancelAtRandomMomentsLeavesNothingHeld() {
        List<String> set = List.of(name("rnd-1"), name("rnd-2"), name("rnd-3"));
        TestClient a = newClient();
        for (int i = 0; i < cancelRounds(); i++) {
            Disposable d = i % 2 == 0
                    ? a.multi().hold(set).subscribeOn(Schedulers.parallel()).subscribe()
                    : a.multi().withLocks(set, s -> Mono.never()).subscribeOn(Schedulers.parallel()).subscribe();
            int spin = ThreadLocalRandom.current().nextInt(0, 3_000_000);
            long until = System.nanoTime() + spin; // cancel at a random moment within 0-3 ms
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            d.dispose();
            int round = i;
            await().atMost(STEP).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5)).untilAsserted(() -> {
                for (String n : set) {
                    assertThat(holderOf(n)).as("%s after the cancel of round %d", n, round).isNull();
                }
            });
        }
    }

    /** @return how many rounds {@link #cancelAtRandomMomentsLeavesNothingHeld} runs */
    protected int cancelRounds() {
        return 20;
    }

    @Test
    void losingOneLeaseCancelsTheBodyWithLockLostExceptionAndReleasesTheOthers() {
        List<String> set = List.of(name("lost-1"), name("lost-2"), name("lost-3"));
        TestClient a = newClient();
        AtomicReference<MultiLease> inside = new AtomicReference<>();
        AtomicInteger cancelled = new AtomicInteger();
        String victim = set.get(1);
        Mono<String> scoped = a.multi().withLocks(set, s -> {
            inside.set(s);
            // the store forgets one lease (owner-checked delete through the client's own backend): its holder must learn it
            return a.faults().delegate().release(victim, s.lease(victim).owner())
                    .then(Mono.<String>never())
                    .doOnCancel(cancelled::incrementAndGet);
        });
        StepVerifier.create(scoped)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockLostException.class)
                        .satisfies(x -> assertThat(((LockLostException) x).lockName()).isEqualTo(victim)))
                .verify(options().leaseTime().multipliedBy(3).plus(STEP));
        assertThat(cancelled).hasValue(1);
        assertThat(inside.get().isValid()).isFalse();
        for (String n : set) {
            await().atMost(STEP).untilAsserted(() -> assertThat(holderOf(n)).as("%s after the loss", n).isNull());
        }
    }

    @Test
    void anAcquiredSetIsReleasedWholeWhenOneLeaseIsLost() {
        List<String> set = List.of(name("whole-1"), name("whole-2"));
        TestClient a = newClient();
        MultiLease held = a.multi().acquire(set).block(STEP);
        a.faults().delegate().release(set.get(0), held.lease(set.get(0)).owner()).block(STEP);
        StepVerifier.create(held.lost()).expectComplete().verify(options().leaseTime().multipliedBy(3).plus(STEP));
        assertThat(held.isValid()).isFalse();
        await().atMost(STEP).untilAsserted(() -> assertThat(holderOf(set.get(1))).as("the other name").isNull());
        held.release().block(STEP);
    }

    @Test
    void withLocksReleasesOnSuccessErrorAndCancel() {
        List<String> set = List.of(name("scoped-1"), name("scoped-2"));
        TestClient a = newClient();
        StepVerifier.create(a.multi().withLocks(set, s -> Mono.just(s.names().size()))).expectNext(2).expectComplete().verify(STEP);
        set.forEach(n -> assertThat(holderOf(n)).as("%s after success", n).isNull());
        StepVerifier.create(a.multi().withLocks(set, s -> Mono.error(new IllegalStateException("boom"))))
                .expectErrorMessage("boom").verify(STEP);
        set.forEach(n -> assertThat(holderOf(n)).as("%s after error", n).isNull());
        AtomicReference<MultiLease> inside = new AtomicReference<>();
        Disposable d = a.multi().withLocks(set, s -> {
            inside.set(s);
            return Mono.never();
        }).subscribe();
        await().atMost(STEP).until(() -> inside.get() != null);
        set.forEach(n -> assertThat(holderOf(n).owner()).isEqualTo(inside.get().lease(n).owner()));
        d.dispose();
        await().atMost(STEP).untilAsserted(() -> set.forEach(n -> assertThat(holderOf(n)).as("%s after cancel", n).isNull()));
    }

    @Test
    void badArgumentsFailAtCallTime() {
        MultiLock multi = newClient().multi();
        assertThatThrownBy(() -> multi.acquire(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("names");
        assertThatThrownBy(() -> multi.tryAcquire(List.of())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names");
        assertThatThrownBy(() -> multi.withLocks(List.of("a", ""), s -> Mono.empty())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names[1]");
        assertThatThrownBy(() -> multi.hold(List.of("x".repeat(1025)))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names[0]");
    }

    /**
     * Bursts of multi-lock acquires over three names each, cancelled while requests are in flight,
     * then the client closed at once: no lock of any of them may be held right after close.
     */
    @Test
    void closeRightAfterCancelLeavesNothingOnTheStore() {
        LockBackend check = checker();
        List<String> left = new ArrayList<>();
        for (int burst = 0; burst < 3; burst++) {
            FaultInjectingBackend b = FaultInjectingBackend.wrap(newBackend());
            LockClient locks = LockClient.create(b, options().mutate().leaseTime(Duration.ofSeconds(30)).build());
            MultiLock multi = MultiLock.create(locks);
            locks.acquire(name("warm")).flatMap(Lease::release).block(STEP); // connected
            List<String> burstNames = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                List<String> set = new ArrayList<>();
                for (int k = 0; k < 3; k++) {
                    String n = "close-after-cancel-" + UUID.randomUUID();
                    set.add(n);
                    burstNames.add(n);
                }
                Disposable d = switch (i % 4) {
                    case 0 -> multi.acquire(set).subscribe(null, e -> { });
                    case 1 -> multi.tryAcquire(set).subscribe(null, e -> { });
                    case 2 -> multi.hold(set).subscribe(null, e -> { });
                    default -> multi.withLocks(set, l -> Mono.never()).subscribe(null, e -> { });
                };
                d.dispose();
            }
            locks.close().block(STEP);
            left.addAll(Flux.fromIterable(burstNames)
                    .flatMap(n -> check.inspect(n).map(h -> n), 16)
                    .collectList().block(STEP));
        }
        assertThat(left).as("locks held right after close, of 180 cancelled multi-lock acquires").isEmpty();
    }
}
