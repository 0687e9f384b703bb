package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.semaphore.SemaphoreState;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * The contract every semaphore store passes. A store's test extends this class and supplies
 * {@link #newStore()}: each call must return an independent store (its own connections) to the
 * same server, so that several semaphores contend as separate processes would. Leases are short
 * (see {@link #options()}); after each test no permit of the test's names may be left.
 */
public abstract class SemaphoreContract {

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);

    private final List<Semaphore> semaphores = new ArrayList<>();
    private final Set<String> names = Collections.synchronizedSet(new LinkedHashSet<>());

    /** @return a new, independent store (its own connections) to the server under test */
    protected abstract SemaphoreStore newStore();

    /** @return options for the tests: short lease and request timeout, a drift allowance for a loaded machine */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofMillis(1200))
                .requestTimeout(Duration.ofSeconds(2))
                .drift(0.05, Duration.ofMillis(20))
                .build();
    }

    /**
     * @param options the default options
     * @return a new semaphore over {@link #newStore()}, closed after the test
     */
    protected Semaphore newSemaphore(LockOptions options) {
        Semaphore s = Semaphore.create(newStore(), options);
        semaphores.add(s);
        return s;
    }

    /** @return a new semaphore over {@link #newStore()} with {@link #options()} */
    protected Semaphore newSemaphore() {
        return newSemaphore(options());
    }

    /**
     * @param prefix a readable prefix
     * @return a name unique to this run, remembered for the after-test check
     */
    protected String name(String prefix) {
        String n = prefix + "-" + UUID.randomUUID();
        names.add(n);
        return n;
    }

    @AfterEach
    void closeAndCheckNothingLeft() {
        for (Semaphore s : semaphores) {
            s.close().block(STEP);
        }
        semaphores.clear();
        SemaphoreStore check = newStore();
        try {
            for (String n : names) {
                await().atMost(STEP).untilAsserted(() ->
                        assertThat(check.holders(n).block(STEP)).as("permits of '%s' left after the test", n).isEmpty());
            }
        } finally {
            check.close().block(STEP);
            names.clear();
        }
    }

    @Test
    void neverMoreThanNHoldersWhenManyRace() {
        String name = name("race");
        int n = 3;
        List<Semaphore> fleet = List.of(newSemaphore(), newSemaphore(), newSemaphore());
        for (Semaphore s : fleet) { // connect first: the race is about permits, not connection set-up
            s.tryAcquire(name("warm-up"), 1).flatMap(Lease::release).block(STEP);
        }
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();
        List<Mono<Void>> all = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            Semaphore s = fleet.get(i % fleet.size());
            all.add(s.withPermit(name, n, lease -> {
                int now = inside.incrementAndGet();
                most.accumulateAndGet(now, Math::max);
                tokens.add(lease.token());
                return Mono.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(2, 15)))
                        .doOnNext(x -> done.incrementAndGet())
                        .then(Mono.fromRunnable(inside::decrementAndGet))
                        .doOnCancel(inside::decrementAndGet)
                        .then();
            }).subscribeOn(Schedulers.parallel()));
        }
        Flux.merge(all).then().block(Duration.ofSeconds(60));
        assertThat(done).hasValue(24);
        assertThat(most.get()).as("most holders at once").isBetween(1, n);
        assertThat(tokens).doesNotHaveDuplicates();
    }

    /**
     * Several callers, each its own semaphore over its own store, ask for 2 of 3 permits at the same
     * moment, round after round: every request must be granted (k permits are one unit, all or none:
     * no caller may hold or queue a part and wait for another's part), never more than 3 permits out
     * at once, every token distinct. A store that queues each permit separately lets the callers'
     * places interleave, and then nobody is ever let in.
     *
     * @param callers how many callers race
     */
    @ParameterizedTest(name = "{0} callers")
    @ValueSource(ints = {2, 3, 5})
    void callersAskingForSeveralPermitsAtOnceAreAllGranted(int callers) {
        String name = name("k-race");
        int permits = 3;
        int count = 2;
        int rounds = 5;
        LockOptions bounded = options().mutate().waitTimeout(Duration.ofSeconds(20)).build();
        List<Semaphore> fleet = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            fleet.add(newSemaphore(bounded));
        }
        for (Semaphore s : fleet) { // connect first: the race is about places in line, not connection set-up
            s.tryAcquire(name("warm-up"), 1).flatMap(Lease::release).block(STEP);
        }
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger granted = new AtomicInteger();
        ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();
        Sinks.Empty<Void> start = Sinks.empty();
        List<Mono<Void>> all = new ArrayList<>();
        for (Semaphore s : fleet) {
            all.add(start.asMono().publishOn(Schedulers.parallel()).then(Flux.range(0, rounds)
                    .concatMap(round -> s.acquire(name, permits, count, bounded).flatMap(leases -> {
                        most.accumulateAndGet(inside.addAndGet(leases.size()), Math::max);
                        granted.incrementAndGet();
                        leases.forEach(l -> tokens.add(l.token()));
                        return Mono.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(1, 5)))
                                .then(Mono.fromRunnable(() -> inside.addAndGet(-leases.size())))
                                .then(Flux.fromIterable(leases).concatMap(Lease::release).then());
                    }))
                    .then()));
        }
        StepVerifier.create(Flux.merge(all).then())
                .then(start::tryEmitEmpty)
                .expectComplete()
                .verify(Duration.ofSeconds(60));
        assertThat(granted).as("requests granted").hasValue(callers * rounds);
        assertThat(most.get()).as("most permits out at once").isBetween(count, permits);
        assertThat(tokens).hasSize(callers * rounds * count).doesNotHaveDuplicates();
    }

    @Test
    void tokensStrictlyIncreaseAcrossGrantsAndSemaphores() {
        String name = name("tokens");
        Semaphore a = newSemaphore();
        Semaphore b = newSemaphore();
        long last = Long.MIN_VALUE;
        for (int i = 0; i < 8; i++) {
            List<Lease> got = (i % 2 == 0 ? a : b).acquire(name, 2, 1 + i % 2, options()).block(STEP);
            for (Lease l : got) {
                assertThat(l.token()).as("token of grant %d", i).isGreaterThan(last);
                assertThat(l.name()).isEqualTo(name);
                last = l.token();
            }
            got.forEach(l -> l.release().block(STEP));
        }
    }

    @Test
    void severalPermitsAreGrantedAllOrNone() {
        String name = name("k");
        Semaphore a = newSemaphore();
        Semaphore b = newSemaphore();
        Lease one = a.tryAcquire(name, 3).block(STEP);
        assertThat(one).isNotNull();
        StepVerifier.create(b.tryAcquire(name, 3, 3, options())).as("3 asked, 2 free").expectComplete().verify(STEP);
        assertThat(b.observe(name).blockFirst(STEP).inUse()).isEqualTo(1);
        List<Lease> two = b.tryAcquire(name, 3, 2, options()).block(STEP);
        assertThat(two).hasSize(2);
        StepVerifier.create(a.tryAcquire(name, 3)).as("full").expectComplete().verify(STEP);
        SemaphoreState state = a.observe(name).blockFirst(STEP);
        assertThat(state.holders()).extracting(SemaphoreState.PermitHolder::owner)
                .containsExactlyInAnyOrder(one.owner(), two.get(0).owner(), two.get(1).owner());
        assertThat(state.holders()).extracting(SemaphoreState.PermitHolder::token).isSorted();
        one.release().block(STEP);
        two.forEach(l -> l.release().block(STEP));
    }

    @Test
    void aCrashedHoldersPermitExpiresAndAWaiterGetsIt() {
        String name = name("crash");
        SemaphoreStore raw = holderStore();
        try {
            // a holder that died: granted on the store, never renewed, never released
            PermitGrant g = raw.tryGrant(name, List.of("dead-" + UUID.randomUUID()), 1, Duration.ofMillis(1500)).block(STEP);
            assertThat(g).isInstanceOf(PermitGrant.Granted.class);
            crash(raw);
            long deadToken = ((PermitGrant.Granted) g).tokens().get(0);
            Semaphore a = newSemaphore();
            long t0 = System.nanoTime();
            Lease got = a.acquire(name, 1).block(STEP);
            assertThat(got.token()).isGreaterThan(deadToken);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("waited for the expiry").isGreaterThan(Duration.ofMillis(500));
            got.release().block(STEP);
        } finally {
            raw.close().block(STEP);
        }
    }

    /** @return the store of the holder that {@link #aCrashedHoldersPermitExpiresAndAWaiterGetsIt} lets die; {@link #newStore()} by default */
    protected SemaphoreStore holderStore() {
        return newStore();
    }

    /**
     * Makes the holder of {@code store} die without releasing. The default does nothing: a holder
     * that stops renewing is dead to a store that expires permits by their lease time. Stores whose
     * permits live as long as a session (ZooKeeper) cut that session off the server here.
     *
     * @param store a store from {@link #holderStore()}
     */
    protected void crash(SemaphoreStore store) {
    }

    @Test
    void releaseWakesAWaiterByNotificationNotByBackoff() {
        String name = name("wake");
        LockOptions slow = options().mutate()
                .leaseTime(Duration.ofSeconds(60))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        Semaphore a = newSemaphore(slow);
        Semaphore b = newSemaphore(slow);
        Lease held = a.acquire(name, 1).block(STEP);
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiter = b.acquire(name, 1).subscribe(got::set);
        try {
            // give the waiter time to ask, be refused and park (its store subscription live)
            StepVerifier.create(Mono.delay(Duration.ofMillis(500))).expectNextCount(1).expectComplete().verify(STEP);
            assertThat(got.get()).isNull();
            held.release().block(STEP);
            await().atMost(Duration.ofSeconds(5)).until(() -> got.get() != null);
            assertThat(got.get().token()).isGreaterThan(held.token());
        } finally {
            waiter.dispose();
            if (got.get() != null) {
                got.get().release().block(STEP);
            }
        }
    }

    /**
     * @return how many requests the server under test has received so far (its own counter, which
     *         may include pings and keep-alives), or -1 where this suite cannot count them
     */
    protected long serverRequests() {
        return -1;
    }

    /**
     * @return the requests one handoff may cost on this store, spare for pings included; checked
     *         only where {@link #serverRequests()} counts
     */
    protected int requestsPerHandoff() {
        return 4;
    }

    /**
     * @param name a semaphore's name
     * @return a count the server raises on every change of the name's permits and waiters (etcd: the
     *         revision; ZooKeeper: the parent's child version), or -1 where this suite cannot read one
     */
    protected long serverChanges(String name) {
        return -1;
    }

    /**
     * @return the lease time of the no-herd chains: by default one that outlasts the chain (no
     *         renewal requests inside it); a store whose lease is its session's overrides it
     */
    protected Duration herdLeaseTime() {
        return Duration.ofSeconds(20);
    }

    /**
     * No herd: a chain of 8 waiters on one permit, each releasing as soon as it is granted, with a
     * 10-minute backoff so that only the store's notifications or watches can wake a waiter. A store
     * that queues natively keeps each waiter in line watching its predecessor, the others wake one
     * waiter per release: one grant attempt per handoff (spare: one more each), the name changed by
     * the releases only (where {@link #serverChanges} reads it), and the server's requests within {@link #requestsPerHandoff()}.
     */
    @Test
    void aHandoffWakesOnlyTheNextWaiter() {
        herdChain(1, "herd");
    }

    /**
     * No herd with N = 2: on a queueing store only the head of the line watches the holders and the
     * others the waiter before them (told when it is let in); elsewhere a release wakes one waiter.
     * With a 10-minute backoff the chain ends only if no wake-up is missed.
     */
    @Test
    void withTwoPermitsAHandoffWakesOnlyTheWaiterItCanLetIn() {
        herdChain(2, "herd2");
    }

    private void herdChain(int permits, String prefix) {
        CountingSemaphoreStore store = new CountingSemaphoreStore(newStore());
        // only notifications or watches can wake a waiter
        Semaphore s = Semaphore.create(store, options().mutate().leaseTime(herdLeaseTime())
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build());
        semaphores.add(s);
        int waiters = 8;
        String name = name(prefix);
        List<Lease> holders = new ArrayList<>();
        for (int i = 0; i < permits; i++) {
            holders.add(s.acquire(name, permits).block(STEP));
        }
        int attemptsAtStart = store.attempts();
        AtomicInteger granted = new AtomicInteger();
        List<Disposable> subs = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            subs.add(s.acquire(name, permits).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet()))
                    .subscribe());
        }
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> store.inFlight() == 0
                    && (store.queues() ? store.waiting() == waiters : store.attempts() - attemptsAtStart >= waiters));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(String.format("not every waiter refused once and waiting after 20 s: queues %s, "
                    + "waiting %d, attempts %d, in flight %d, granted %d", store.queues(), store.waiting(),
                    store.attempts() - attemptsAtStart, store.inFlight(), granted.get()), e);
        }
        assertThat(granted.get()).as("granted while the holders hold").isZero();
        long changesBefore = serverChanges(name);
        long requestsBefore = serverRequests();
        int attemptsBefore = store.attempts();
        holders.forEach(h -> h.release().block(STEP));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
        long requests = serverRequests() - requestsBefore;
        long changes = serverChanges(name) - changesBefore;
        int attempts = store.attempts() - attemptsBefore;
        subs.forEach(Disposable::dispose);
        System.out.printf("%s semaphore N = %d, %d waiters: %d requests, %d changes, %d grant attempts for %d handoffs%n",
                store.name(), permits, waiters, requestsBefore < 0 ? -1 : requests, changesBefore < 0 ? -1 : changes,
                attempts, waiters);
        // one attempt per handoff (the woken waiter's); spare: one more each
        assertThat(attempts).as("grant attempts for %d handoffs", waiters).isLessThanOrEqualTo(2 * waiters);
        if (changesBefore >= 0 && permits == 1) {
            // the releases only (the holders' and each grantee's): waiters write nothing while they wait
            assertThat(changes).as("changes of the name for %d handoffs", waiters).isLessThanOrEqualTo(waiters + permits);
        }
        if (requestsBefore >= 0) {
            assertThat(requests).as("requests for %d handoffs", waiters)
                    .isLessThanOrEqualTo((long) permits * requestsPerHandoff() * waiters + 2L * permits);
        }
    }

    @Test
    void cancelAtRandomMomentsLeavesNothingHeld() {
        String name = name("cancel");
        Semaphore a = newSemaphore();
        Semaphore b = newSemaphore();
        SemaphoreStore raw = newStore();
        try {
            for (int i = 0; i < cancelRounds(); i++) {
                Lease blocker = i % 3 == 0 ? b.acquire(name, 1).block(STEP) : null; // sometimes cancel while waiting
                Disposable d = i % 2 == 0
                        ? a.hold(name, 1).subscribeOn(Schedulers.parallel()).subscribe()
                        : a.withPermit(name, 1, l -> Mono.never()).subscribeOn(Schedulers.parallel()).subscribe();
                long until = System.nanoTime() + ThreadLocalRandom.current().nextInt(0, 3_000_000);
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                d.dispose();
                if (blocker != null) {
                    blocker.release().block(STEP);
                }
                int round = i;
                await().atMost(STEP).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5))
                        .untilAsserted(() -> assertThat(raw.holders(name).block(STEP)).as("permits after round %d", round).isEmpty());
            }
        } finally {
            raw.close().block(STEP);
        }
    }

    /** @return how many rounds {@link #cancelAtRandomMomentsLeavesNothingHeld} runs */
    protected int cancelRounds() {
        return 20;
    }

    @Test
    void aPermitTheStoreNoLongerHasIsLostAndCancelsTheBody() {
        String name = name("lost");
        Semaphore a = newSemaphore();
        SemaphoreStore raw = newStore();
        try {
            AtomicInteger cancelled = new AtomicInteger();
            AtomicReference<Lease> inside = new AtomicReference<>();
            Mono<String> scoped = a.withPermit(name, 2, l -> {
                inside.set(l);
                return raw.release(name, l.owner()).then(Mono.<String>never()).doOnCancel(cancelled::incrementAndGet);
            });
            StepVerifier.create(scoped)
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockLostException.class)
                            .satisfies(x -> assertThat(((LockLostException) x).lockName()).isEqualTo(name)))
                    .verify(options().leaseTime().multipliedBy(3).plus(STEP));
            assertThat(cancelled).hasValue(1);
            assertThat(inside.get().isValid()).isFalse();
        } finally {
            raw.close().block(STEP);
        }
    }

    @Test
    void renewalKeepsAPermitAcrossLeasePeriodsAndObserveSeesItsHolder() {
        String name = name("renew");
        Semaphore a = newSemaphore();
        Semaphore b = newSemaphore();
        ConcurrentLinkedQueue<Lease> updates = new ConcurrentLinkedQueue<>();
        List<SemaphoreState> seen = Collections.synchronizedList(new ArrayList<>());
        Disposable watching = b.observe(name).subscribe(seen::add);
        Disposable hold = a.hold(name, 1).subscribe(updates::add);
        try {
            await().atMost(STEP).until(() -> updates.size() >= 8); // 7 renewals at lease/3: more than two lease periods
            assertThat(updates).extracting(Lease::token).containsOnly(updates.peek().token());
            assertThat(updates).extracting(Lease::validUntilNanos).isSorted();
            assertThat(b.tryAcquire(name, 1).blockOptional(STEP)).as("still held").isEmpty();
            await().atMost(STEP).untilAsserted(() -> assertThat(seen).isNotEmpty()
                    .last().satisfies(s -> assertThat(s.holders()).extracting(SemaphoreState.PermitHolder::owner)
                            .containsExactly(updates.peek().owner())));
        } finally {
            hold.dispose();
        }
        await().atMost(STEP).untilAsserted(() -> assertThat(seen).last().satisfies(s -> assertThat(s.inUse()).isZero()));
        watching.dispose();
    }

    @Test
    void badArgumentsFailAtCallTime() {
        Semaphore a = newSemaphore();
        assertThatThrownBy(() -> a.acquire(null, 1)).isInstanceOf(NullPointerException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> a.acquire("x".repeat(1025), 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> a.acquire("s", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("permits");
        assertThatThrownBy(() -> a.tryAcquire("s", 2, 3, options())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count");
    }

    /**
     * Bursts of 200 acquires of every kind (wait, try, several permits, hold, withPermit), each
     * cancelled while its request is in flight, then the semaphore closed at once: no permit of
     * any of them may be left on the store right after close (each would stay for its whole lease).
     */
    @Test
    void closeRightAfterCancelLeavesNoPermitOnTheStore() {
        LockOptions longLease = options().mutate().leaseTime(Duration.ofSeconds(30)).build();
        SemaphoreStore check = newStore();
        List<String> left = new ArrayList<>();
        try {
            for (int burst = 0; burst < 5; burst++) {
                Semaphore s = Semaphore.create(newStore(), longLease);
                s.tryAcquire(name("warm"), 1).flatMap(Lease::release).block(STEP); // connected
                List<String> burstNames = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    // not name(): the after-test check polls each of its names; this test checks its own, at once
                    String n = "close-after-cancel-" + UUID.randomUUID();
                    burstNames.add(n);
                    Disposable d = switch (i % 5) {
                        case 0 -> s.acquire(n, 3).subscribe(null, e -> { });
                        case 1 -> s.tryAcquire(n, 3).subscribe(null, e -> { });
                        case 2 -> s.acquire(n, 3, 2, longLease).subscribe(null, e -> { });
                        case 3 -> s.hold(n, 3).subscribe(null, e -> { });
                        default -> s.withPermit(n, 3, l -> Mono.never()).subscribe(null, e -> { });
                    };
                    d.dispose();
                }
                s.close().block(STEP);
                left.addAll(Flux.fromIterable(burstNames)
                        .flatMap(n -> check.holders(n).filter(h -> !h.isEmpty()).map(h -> n), 16)
                        .collectList().block(STEP));
            }
        } finally {
            check.close().block(STEP);
        }
        assertThat(left).as("semaphores with permits on the store right after close, of 1000 cancelled acquires").isEmpty();
    }
}
