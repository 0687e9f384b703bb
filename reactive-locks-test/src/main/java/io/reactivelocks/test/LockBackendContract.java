package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.spi.LockBackend;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * The contract every backend passes. A backend's test extends this class and supplies
 * {@link #newBackend()}: each call must return an independent client (its own connections) to
 * the same store, so that several clients contend as separate processes would. Tests run in
 * real time against the real store with short leases (see {@link #options()}).
 *
 * <p>Stores that renew by session (etcd, ZooKeeper) override {@link #cutRenewals} with a real
 * fault (a fault proxy blackholing that client), since failing the client-side calls does not
 * stop the server-side session.
 */
public abstract class LockBackendContract {

    /**
     * The tag of the tests that dig into the engine's and the store's corners (many iterations, many
     * lease periods, unreachable stores, hostile names): they run where the store itself is tested.
     * A check of a deployment of the same server (a container, see {@code reactive-locks-testcontainers})
     * may exclude them ({@code <excludedGroups>deep</excludedGroups>}) and run the rest: exclusion,
     * tokens, wake-ups, expiry, payloads, observation and close, through that deployment's network path.
     */
    public static final String DEEP = "deep";

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);

    private final List<TestClient> clients = new ArrayList<>();
    private final Set<String> names = Collections.synchronizedSet(new LinkedHashSet<>());

    /** @return a new, independent backend (its own connections) to the store under test */
    protected abstract LockBackend newBackend();

    /**
     * @param timers the scheduler the backend must use for its own timers (keep-alives, delayed
     *               clean-ups, retries), so that the contract can check none outlives a close
     * @return a new, independent backend like {@link #newBackend()}; the default ignores
     *         {@code timers}, which fits backends without timers of their own
     */
    protected LockBackend newBackend(Scheduler timers) {
        return newBackend();
    }

    /** @return a backend whose store does not answer (blackholed or closed); the default silences a real one */
    protected LockBackend unreachableBackend() {
        return FaultInjectingBackend.wrap(newBackend()).silent(true);
    }

    /**
     * @return options for the tests: short lease, short request timeout, and a drift allowance
     *         (5% + 20 ms = 80 ms of a 1.2 s lease) wide enough for a loaded test machine's timer
     *         lateness, which is what the allowance is for
     */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofMillis(1200))
                .requestTimeout(Duration.ofSeconds(2))
                .drift(0.05, Duration.ofMillis(20))
                .build();
    }

    /**
     * @param lease the lease time
     * @return {@link #options()} with another lease time, for holders whose expiry a test is not about
     */
    private LockOptions withLease(Duration lease) {
        return options().mutate().leaseTime(lease).build();
    }

    /**
     * Stops {@code client}'s renewals from reaching the store while its other calls still do.
     *
     * @param client the client whose lease must now run out
     */
    protected void cutRenewals(TestClient client) {
        client.faults().failRenewals(true);
    }

    /**
     * Checks that the store holds nothing for {@code names} any more. The default asks
     * {@link LockBackend#inspect}; backends may also scan their key space.
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

    /** A client under test: the lock client and the fault switch of its backend. */
    public record TestClient(LockClient locks, FaultInjectingBackend faults) {
    }

    /** @return a new client over {@link #newBackend()} with {@link #options()} */
    protected TestClient newClient() {
        return newClient(options());
    }

    /**
     * @param options the client's default options
     * @return a new client over {@link #newBackend()}
     */
    protected TestClient newClient(LockOptions options) {
        FaultInjectingBackend b = FaultInjectingBackend.wrap(newBackend());
        TestClient c = new TestClient(LockClient.create(b, options), b);
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

    @AfterEach
    void closeClientsAndCheckNothingLeft() {
        for (TestClient c : clients) {
            c.locks().close().block(STEP);
        }
        clients.clear();
        LockBackend check = newBackend();
        try {
            assertNothingLeft(check, names);
        } finally {
            check.close().block(STEP);
            names.clear();
        }
    }

    // ---------------------------------------------------------------- exclusion and tokens

    @Test
    void mutualExclusionWhenManySubscribersRace() {
        String name = name("race");
        MutualExclusionChecker checker = new MutualExclusionChecker();
        List<TestClient> cs = List.of(newClient(), newClient(), newClient());
        AtomicInteger done = new AtomicInteger();
        int perClient = 8;
        List<Mono<Void>> all = new ArrayList<>();
        for (TestClient c : cs) {
            for (int i = 0; i < perClient; i++) {
                all.add(c.locks().withLock(name, lease -> {
                    MutualExclusionChecker.Hold h = checker.begin(name, lease.owner(), lease.token());
                    // end the hold before the body's completion goes downstream (and the release begins)
                    return Mono.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(1, 5)))
                            .doOnNext(x -> done.incrementAndGet())
                            .then(Mono.fromRunnable(h::end))
                            .doOnCancel(h::end)
                            .then();
                }));
            }
        }
        Flux.merge(all).then().block(Duration.ofSeconds(60));
        assertThat(done).hasValue(cs.size() * perClient);
        checker.assertNoOverlap();
        checker.assertTokensStrictlyIncreasing(name);
    }

    @Test
    void tokensStrictlyIncreaseAcrossHoldersAndClients() {
        String name = name("tokens");
        TestClient a = newClient();
        TestClient b = newClient();
        long last = Long.MIN_VALUE;
        for (int i = 0; i < 10; i++) {
            TestClient c = i % 2 == 0 ? a : b;
            Lease lease = c.locks().acquire(name).block(STEP);
            assertThat(lease).isNotNull();
            assertThat(lease.token()).as("token of grant %d", i).isGreaterThan(last);
            last = lease.token();
            lease.release().block(STEP);
        }
    }

    @Test
    void tryAcquireOnAHeldLockIsEmpty() {
        String name = name("try");
        TestClient a = newClient();
        TestClient b = newClient();
        Lease held = a.locks().tryAcquire(name).block(STEP);
        assertThat(held).isNotNull();
        StepVerifier.create(b.locks().tryAcquire(name)).expectComplete().verify(STEP);
        StepVerifier.create(a.locks().tryAcquire(name)).as("plain acquire is not reentrant")
                .expectComplete().verify(STEP);
        held.release().block(STEP);
        Lease next = b.locks().tryAcquire(name).block(STEP);
        assertThat(next).isNotNull();
        assertThat(next.token()).isGreaterThan(held.token());
        next.release().block(STEP);
    }

    @Test
    void metricsShowHeldLeasesAndPendingAcquires() {
        String name = name("metrics");
        TestClient a = newClient();
        TestClient b = newClient();
        Lease held = a.locks().acquire(name).block(STEP);
        assertThat(held).isNotNull();
        assertThat(a.locks().metrics().heldLeases()).singleElement().satisfies(l -> {
            assertThat(l.name()).isEqualTo(name);
            assertThat(l.owner()).isEqualTo(held.owner());
            assertThat(l.token()).isEqualTo(held.token());
            // what is left of the lease, 0 once its local deadline passed — which a loaded machine reached between the
            // grant and this line with a container suite's 1.2 s lease (a stall that expired ZooKeeper sessions beside
            // it), so "positive" is not asserted; the stores' TTLs differ from the option (whole seconds on etcd, the
            // negotiated session on ZooKeeper), so no upper bound either
            assertThat(l.remaining()).isGreaterThanOrEqualTo(Duration.ZERO);
        });
        Disposable waiter = b.locks().acquire(name).subscribe();
        try {
            assertThat(b.locks().metrics().pendingAcquires()).containsExactly(name);
            assertThat(b.locks().metrics().heldLeaseCount()).isZero();
        } finally {
            waiter.dispose();
            held.release().block(STEP);
        }
        assertThat(a.locks().metrics().heldLeaseCount()).isZero();
        await().atMost(STEP).untilAsserted(() -> assertThat(b.locks().metrics().pendingAcquires()).isEmpty());
    }

    @Test
    void releaseWakesAWaiterByNotificationNotByBackoff() {
        String name = name("wake");
        // only a notification can wake the waiter quickly: a 10-minute backoff and a 60 s lease
        LockOptions slow = options().mutate()
                .leaseTime(Duration.ofSeconds(60))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        TestClient a = newClient(slow);
        TestClient b = newClient(slow);
        Lease held = a.locks().acquire(name).block(STEP);
        long grantsBefore = b.faults().grantCalls();
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiter = b.locks().acquire(name).subscribe(got::set);
        try {
            awaitParkedWaiter(b, name, grantsBefore);
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
     * Waits until {@code waiter}'s acquire of {@code name} is parked, so that only a notification
     * can wake it. The default fits polling stores: the waiter has asked, been told busy, and
     * re-checked once its notification subscription went live (two attempts). Stores that queue
     * natively override it: one attempt, and the store shows the waiter's queue entry.
     *
     * @param waiter           the waiting client
     * @param name             the lock name
     * @param grantCallsBefore the waiter's {@code tryGrant} count before it started to wait
     */
    protected void awaitParkedWaiter(TestClient waiter, String name, long grantCallsBefore) {
        await().atMost(STEP).until(() -> waiter.faults().grantCalls() >= grantCallsBefore + 2);
    }

    // ---------------------------------------------------------------- renewal, expiry, loss

    @Test
    @Tag(DEEP)
    void renewalKeepsALeaseAliveAcrossManyLeasePeriods() {
        String name = name("renew");
        TestClient a = newClient();
        TestClient b = newClient();
        Duration lease = options().leaseTime();
        ConcurrentLinkedQueue<Lease> updates = new ConcurrentLinkedQueue<>();
        Disposable hold = a.locks().hold(name).subscribe(updates::add);
        try {
            await().atMost(STEP).until(() -> !updates.isEmpty());
            long t0 = System.nanoTime();
            // 13 renewals at lease/3 take more than four lease periods
            await().atMost(lease.multipliedBy(6).plus(STEP)).until(() -> updates.size() >= 14);
            assertThat(System.nanoTime() - t0).as("time held").isGreaterThan(lease.multipliedBy(4).toNanos());
            assertThat(updates).extracting(Lease::token).containsOnly(updates.peek().token());
            assertThat(updates).extracting(Lease::validUntilNanos).isSorted();
            assertThat(b.locks().tryAcquire(name).blockOptional(STEP)).as("still held by a").isEmpty();
        } finally {
            hold.dispose();
        }
    }

    @Test
    void expiryWithoutRenewalLetsAnotherClientInOnlyAfterTheHoldStreamCompleted() {
        String name = name("expiry");
        TestClient a = newClient();
        TestClient b = newClient();
        AtomicLong holdEnded = new AtomicLong();
        AtomicReference<Lease> first = new AtomicReference<>();
        Disposable hold = a.locks().hold(name)
                .doOnNext(l -> first.compareAndSet(null, l))
                .subscribe(null, e -> holdEnded.set(-1), () -> holdEnded.set(System.nanoTime()));
        await().atMost(STEP).until(() -> first.get() != null);
        cutRenewals(a);
        Lease second = b.locks().acquire(name).block(options().leaseTime().multipliedBy(3).plus(STEP));
        long granted = System.nanoTime();
        assertThat(second).isNotNull();
        assertThat(holdEnded.get()).as("hold stream completed (not errored) before the other client's grant")
                .isPositive().isLessThan(granted);
        assertThat(second.token()).isGreaterThan(first.get().token());
        assertThat(first.get().isValid()).isFalse();
        hold.dispose();
        second.release().block(STEP);
    }

    @Test
    @Tag(DEEP)
    void aStaleOrForgedLeaseCannotRenewOrReleaseAnotherOwnersLock() {
        String name = name("forged");
        TestClient a = newClient();
        TestClient b = newClient();
        LockBackend raw = a.faults().delegate();
        Lease held = a.locks().acquire(name).block(STEP);
        assertThat(raw.release(name, "forged-owner").block(STEP)).isFalse();
        assertThat(raw.renew(List.of(new io.reactivelocks.spi.RenewRequest(
                new io.reactivelocks.spi.HeldLock(name, "forged-owner", held.token()), options().leaseTime())))
                .block(STEP)).extracting(io.reactivelocks.spi.RenewOutcome::renewed).containsExactly(false);
        assertThat(raw.inspect(name).block(STEP).owner()).isEqualTo(held.owner());

        // a stale lease: a's lease runs out, b takes over, a's late release must not free b's lock
        cutRenewals(a);
        Lease taken = b.locks().acquire(name).block(options().leaseTime().multipliedBy(3).plus(STEP));
        assertThat(taken.token()).isGreaterThan(held.token());
        held.release().block(STEP);
        assertThat(raw.renew(List.of(new io.reactivelocks.spi.RenewRequest(
                new io.reactivelocks.spi.HeldLock(name, held.owner(), held.token()), options().leaseTime())))
                .block(STEP)).extracting(io.reactivelocks.spi.RenewOutcome::renewed).containsExactly(false);
        assertThat(raw.inspect(name).block(STEP).owner()).as("b still holds").isEqualTo(taken.owner());
        taken.release().block(STEP);
    }

    // ---------------------------------------------------------------- cancellation

    @Test
    @Tag(DEEP)
    void cancelAtRandomMomentsDuringAcquireLeavesTheLockFree() {
        String name = name("cancel");
        TestClient a = newClient();
        TestClient b = newClient();
        LockBackend raw = a.faults().delegate();
        int rounds = cancelRounds();
        for (int i = 0; i < rounds; i++) {
            Lease blocker = i % 3 == 0 ? b.locks().acquire(name).block(STEP) : null; // sometimes cancel while waiting
            // a lease that did reach the subscriber is its own to release (a lambda subscriber would
            // drop one that arrives while it cancels: Reactor's onNextDropped); the rest is the client's job
            Disposable d;
            if (i % 2 == 0) {
                d = a.locks().hold(name).subscribeOn(Schedulers.parallel()).subscribe();
            } else {
                BaseSubscriber<Lease> releasing = new BaseSubscriber<>() {
                    @Override
                    protected void hookOnNext(Lease lease) {
                        lease.release().subscribe();
                    }
                };
                a.locks().acquire(name).subscribeOn(Schedulers.parallel()).subscribe(releasing);
                d = releasing;
            }
            int spin = ThreadLocalRandom.current().nextInt(0, 200_000);
            long until = System.nanoTime() + spin; // cancel at a random moment within 0-200 µs
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            d.dispose();
            if (blocker != null) {
                blocker.release().block(STEP);
            }
            int round = i;
            await().atMost(STEP).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(2))
                    .untilAsserted(() -> assertThat(raw.inspect(name).blockOptional(STEP))
                    .as("lock after cancelled acquire, round %d", round).isEmpty());
        }
        assertThat(a.locks().metrics().heldLeaseCount()).isZero();
    }

    /** @return how many cancel rounds {@link #cancelAtRandomMomentsDuringAcquireLeavesTheLockFree} runs */
    protected int cancelRounds() {
        return 300;
    }

    // ---------------------------------------------------------------- scoped use

    @Test
    void withLockReleasesOnSuccessErrorAndCancel() {
        String name = name("scoped");
        TestClient a = newClient();
        LockBackend raw = a.faults().delegate();

        StepVerifier.create(a.locks().withLock(name, lease -> Mono.just(lease.token())))
                .expectNextCount(1).expectComplete().verify(STEP);
        assertThat(raw.inspect(name).blockOptional(STEP)).as("after success").isEmpty();

        StepVerifier.create(a.locks().withLock(name, lease -> Mono.error(new IllegalStateException("boom"))))
                .expectErrorMessage("boom").verify(STEP);
        assertThat(raw.inspect(name).blockOptional(STEP)).as("after error").isEmpty();

        AtomicReference<Lease> inside = new AtomicReference<>();
        Disposable d = a.locks().withLock(name, lease -> {
            inside.set(lease);
            return Mono.never();
        }).subscribe();
        await().atMost(STEP).until(() -> inside.get() != null);
        assertThat(raw.inspect(name).block(STEP).owner()).isEqualTo(inside.get().owner());
        d.dispose();
        await().atMost(STEP).untilAsserted(() -> assertThat(raw.inspect(name).blockOptional(STEP)).as("after cancel").isEmpty());

        StepVerifier.create(a.locks().withLockMany(name, lease -> Flux.range(1, 3)))
                .expectNext(1, 2, 3).expectComplete().verify(STEP);
        assertThat(raw.inspect(name).blockOptional(STEP)).as("after streaming body").isEmpty();
    }

    @Test
    @Tag(DEEP)
    void withLockFailsWithLockLostExceptionWhenTheLeaseIsLost() {
        String name = name("lost");
        TestClient a = newClient();
        AtomicReference<Lease> inside = new AtomicReference<>();
        AtomicInteger bodyCancelled = new AtomicInteger();
        Mono<String> scoped = a.locks().withLock(name, lease -> {
            inside.set(lease);
            cutRenewals(a);
            return Mono.<String>never().doOnCancel(bodyCancelled::incrementAndGet);
        });
        StepVerifier.create(scoped)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockLostException.class)
                        .satisfies(x -> assertThat(((LockLostException) x).lockName()).isEqualTo(name)))
                .verify(options().leaseTime().multipliedBy(3).plus(STEP));
        assertThat(bodyCancelled).hasValue(1);
        assertThat(inside.get().isValid()).isFalse();
    }

    @Test
    void withLockIsReentrantThroughTheReactorContext() {
        String name = name("reentrant");
        TestClient a = newClient();
        Mono<List<Long>> nested = a.locks().withLock(name, outer ->
                a.locks().withLock(name, inner ->
                        a.locks().withLockMany(name, innermost -> Flux.just(outer.token(), inner.token(), innermost.token()))
                                .collectList()));
        StepVerifier.create(nested)
                .assertNext(tokens -> assertThat(tokens).hasSize(3).containsOnly(tokens.get(0)))
                .expectComplete().verify(STEP);
        // an unrelated chain does not share the lease
        StepVerifier.create(a.locks().withLock(name, outer ->
                        a.locks().tryAcquire(name).map(l -> "shared").defaultIfEmpty("not shared")))
                .expectNext("not shared").expectComplete().verify(STEP);
        assertThat(a.faults().delegate().inspect(name).blockOptional(STEP)).isEmpty();
    }

    // ---------------------------------------------------------------- observation

    /**
     * Free, then the lease's owner and token, then free again after the release. A store that grants
     * by quorum may show an attempt it gave back first (a majority too slow for the lease's validity:
     * seen under load, a Held 5 ms older than the lease), so the test looks for the lease's own state
     * rather than taking the first Held; nothing after its last report is held.
     */
    @Test
    void observeReportsFreeThenHeldThenFreeWithTokens() {
        String name = name("observe");
        TestClient a = newClient();
        TestClient b = newClient();
        List<LockState> states = new java.util.concurrent.CopyOnWriteArrayList<>();
        Disposable watching = b.locks().observe(name).subscribe(states::add);
        try {
            await().atMost(STEP).until(() -> !states.isEmpty());
            assertThat(states.get(0)).isEqualTo(new LockState.Free(name));
            Lease lease = a.locks().acquire(name).block(STEP);
            java.util.function.Predicate<LockState> theLease = s -> s instanceof LockState.Held h
                    && h.owner().equals(lease.owner()) && h.token() == lease.token();
            await().atMost(STEP).untilAsserted(() -> assertThat(states).anyMatch(theLease));
            lease.release().block(STEP);
            await().atMost(STEP).untilAsserted(() -> assertThat(states.get(states.size() - 1).isHeld()).isFalse());
            List<LockState> seen = List.copyOf(states);
            int at = seen.size() - 1;
            while (!theLease.test(seen.get(at))) {
                at--;
            }
            assertThat(seen.subList(at + 1, seen.size())).as("states after the lease's, in %s", seen)
                    .isNotEmpty().noneMatch(LockState::isHeld);
            assertThat(seen).as("states seen").noneMatch(s -> s instanceof LockState.Held h && h.token() > lease.token());
        } finally {
            watching.dispose();
        }
    }

    @Test
    @Tag(DEEP)
    void awaitReleaseCompletesOnReleaseAndOnExpiry() {
        String name = name("await");
        TestClient a = newClient();
        TestClient b = newClient();
        Lease held = a.locks().acquire(name).block(STEP);
        StepVerifier.create(b.locks().awaitRelease(name))
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(100))
                .then(() -> held.release().block(STEP))
                .expectComplete()
                .verify(STEP);

        Lease again = a.locks().acquire(name).block(STEP);
        cutRenewals(a);
        StepVerifier.create(b.locks().awaitRelease(name))
                .expectComplete()
                .verify(options().leaseTime().multipliedBy(3).plus(STEP));
        assertThat(again.isValid()).isFalse();
        // awaitRelease on a free lock completes at once
        StepVerifier.create(b.locks().awaitRelease(name(("free")))).expectComplete().verify(STEP);
    }

    // ---------------------------------------------------------------- payload

    @Test
    void payloadIsStoredWithTheGrantVisibleToOthersAndUpdatableByTheHolder() {
        String name = name("payload");
        TestClient b = newClient();
        String first = "host-a:8080\nüñî€😀";
        // This test is about whose payload is shown, not about expiry: with the contract's short lease a starved machine
        // can let a holder's lease run out between two of its requests (the lease doing its job; loaded run s43: lost
        // before the third update, PostgreSQL container). The first holder gets 3 s, which rides out a 2 s stall and
        // still lets an observer of a store without notifications, which re-reads when the lease it saw runs out, see
        // each update within the step; the second holder 30 s, since nothing observes it.
        LockOptions observedLease = withLease(Duration.ofSeconds(3));
        LockOptions longLease = withLease(Duration.ofSeconds(30));
        TestClient a = newClient(observedLease); // a store may take every lease's time from its client (ZooKeeper)
        Lease lease = a.locks().acquire(name, observedLease.withPayload(first)).block(STEP);
        assertThat(lease.payload()).isEqualTo(first);
        assertThat(b.locks().inspect(name).block(STEP)).isInstanceOfSatisfying(LockState.Held.class, h -> {
            assertThat(h.owner()).isEqualTo(lease.owner());
            assertThat(h.token()).isEqualTo(lease.token());
            assertThat(h.payload()).isEqualTo(first);
        });
        List<LockState> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        Disposable watching = b.locks().observe(name).subscribe(seen::add);
        try {
            await().atMost(STEP).until(() -> seen.size() >= 1);
            lease.updatePayload("second").block(STEP);
            assertThat(lease.payload()).isEqualTo("second");
            await().atMost(STEP).untilAsserted(() -> assertThat(seen).last()
                    .isInstanceOfSatisfying(LockState.Held.class, h -> {
                        assertThat(h.token()).isEqualTo(lease.token());
                        assertThat(h.payload()).isEqualTo("second");
                    }));
            assertThat(((LockState.Held) b.locks().inspect(name).block(STEP)).payload()).isEqualTo("second");
            // the empty string is a payload, distinct from none
            lease.updatePayload("").block(STEP);
            assertThat(((LockState.Held) b.locks().inspect(name).block(STEP)).payload()).isEqualTo("");
            lease.updatePayload(null).block(STEP);
            assertThat(((LockState.Held) b.locks().inspect(name).block(STEP)).payload()).isNull();
            assertThat(lease.payload()).isNull();
        } finally {
            watching.dispose();
        }
        lease.release().block(STEP);
        StepVerifier.create(a.locks().inspect(name)).expectNext(new LockState.Free(name)).expectComplete().verify(STEP);

        // a waiter's payload shows only once it holds the lock
        String queued = name("payload-queued");
        Lease holder = newClient(longLease).locks().acquire(queued, longLease.withPayload("a")).block(STEP);
        long grantsBefore = b.faults().grantCalls();
        Mono<Lease> next = b.locks().acquire(queued, options().withPayload("b")).cache();
        next.subscribe(null, e -> { });
        await().atMost(STEP).until(() -> b.faults().grantCalls() > grantsBefore);
        assertThat(a.locks().inspect(queued).block(STEP)).isInstanceOfSatisfying(LockState.Held.class, h -> {
            assertThat(h.owner()).isEqualTo(holder.owner());
            assertThat(h.payload()).isEqualTo("a");
        });
        holder.release().block(STEP);
        Lease bLease = next.block(STEP);
        assertThat(bLease.payload()).isEqualTo("b");
        assertThat(a.locks().inspect(queued).block(STEP)).isInstanceOfSatisfying(LockState.Held.class, h -> {
            assertThat(h.owner()).isEqualTo(bLease.owner());
            assertThat(h.payload()).isEqualTo("b");
        });
        bLease.release().block(STEP);
        StepVerifier.create(a.locks().inspect(queued)).expectNext(new LockState.Free(queued)).expectComplete().verify(STEP);
    }

    @Test
    void aLockTakenWithoutPayloadHasNone() {
        String name = name("no-payload");
        TestClient a = newClient();
        Lease lease = a.locks().acquire(name).block(STEP);
        assertThat(lease.payload()).isNull();
        assertThat(newClient().locks().inspect(name).block(STEP)).isInstanceOfSatisfying(LockState.Held.class, h ->
                assertThat(h.payload()).isNull());
        lease.release().block(STEP);
    }

    @Test
    void onlyTheCurrentHolderMayUpdateThePayload() {
        String name = name("payload-owner");
        TestClient a = newClient();
        // a long lease for b's holder: three requests follow its grant, and this is about owner and token, not expiry
        LockOptions longLease = withLease(Duration.ofSeconds(30));
        TestClient b = newClient(longLease);
        Lease stale = a.locks().acquire(name, options().withPayload("a")).block(STEP);
        stale.release().block(STEP);
        StepVerifier.create(stale.updatePayload("after release")).expectError(LockLostException.class).verify(STEP);
        Lease current = b.locks().acquire(name, longLease.withPayload("b")).block(STEP);
        // a forged or stale grant is refused on the store itself (owner and token checked)
        io.reactivelocks.spi.HeldLock forged = new io.reactivelocks.spi.HeldLock(name, stale.owner(), current.token());
        assertThat(a.faults().updatePayload(forged, "forged").block(STEP)).isFalse();
        io.reactivelocks.spi.HeldLock oldToken = new io.reactivelocks.spi.HeldLock(name, current.owner(), stale.token());
        assertThat(a.faults().updatePayload(oldToken, "forged").block(STEP)).isFalse();
        assertThat(((LockState.Held) a.locks().inspect(name).block(STEP)).payload()).isEqualTo("b");
        current.release().block(STEP);
        assertThat(a.faults().updatePayload(new io.reactivelocks.spi.HeldLock(name, current.owner(), current.token()), "x")
                .block(STEP)).as("update of a released grant").isFalse();
        StepVerifier.create(a.locks().inspect(name)).expectNext(new LockState.Free(name)).expectComplete().verify(STEP);
    }

    @Test
    @Tag(DEEP)
    void payloadSizeIsBoundedAndCheckedAtCallTime() {
        String name = name("payload-size");
        TestClient a = newClient();
        // 4096 UTF-8 bytes exactly: 1024 four-byte code points
        String largest = "😀".repeat(LockOptions.MAX_PAYLOAD_BYTES / 4);
        assertThatThrownBy(() -> LockOptions.builder().payload(largest + "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload").hasMessageContaining("4096");
        assertThatThrownBy(() -> options().withPayload("\uD800"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
        Lease lease = a.locks().acquire(name, options().withPayload(largest)).block(STEP);
        assertThat(((LockState.Held) newClient().locks().inspect(name).block(STEP)).payload()).isEqualTo(largest);
        assertThatThrownBy(() -> lease.updatePayload("x".repeat(LockOptions.MAX_PAYLOAD_BYTES + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
        lease.release().block(STEP);
    }

    @Test
    void reentrantWithLockKeepsTheOuterPayload() {
        String name = name("payload-reentrant");
        TestClient a = newClient();
        String inner = a.locks().withLock(name, options().withPayload("outer"),
                outer -> a.locks().withLock(name, options().withPayload("inner"), l -> Mono.just(l.payload()))).block(STEP);
        assertThat(inner).isEqualTo("outer");
    }

    // ---------------------------------------------------------------- names and arguments

    @Test
    @Tag(DEEP)
    void hostileNamesAreDataAndDoNotCollide() {
        TestClient a = newClient();
        String unique = UUID.randomUUID().toString();
        List<String> hostile = new ArrayList<>(List.of(
                "ünïcødé-锁-🔒-" + unique, "a/b/../c-" + unique, "*-" + unique, "?-" + unique, "[a-z]-" + unique,
                "it's-" + unique, "100%-" + unique, "{tag}-" + unique, "}{-" + unique, "zookeeper-" + unique,
                "..-" + unique, "line\nbreak-" + unique, "nul\u0000byte-" + unique, " -" + unique,
                "a:b:c-" + unique, "\\-" + unique, "$(rm -rf)-" + unique, "'; DROP TABLE locks;--" + unique));
        String prefix = "x-" + unique + "-";
        int room = 1024 - prefix.length();
        hostile.add(prefix + "é".repeat(room / 2) + "x".repeat(room % 2)); // exactly 1024 UTF-8 bytes
        assertThat(hostile.get(hostile.size() - 1).getBytes(java.nio.charset.StandardCharsets.UTF_8)).hasSize(1024);
        names.addAll(hostile);
        List<Lease> leases = new ArrayList<>();
        for (String n : hostile) {
            Lease l = a.locks().tryAcquire(n).block(STEP);
            assertThat(l).as("grant of %s", n).isNotNull();
            assertThat(l.name()).isEqualTo(n);
            leases.add(l);
        }
        // all held at once: none collided with another
        for (Lease l : leases) {
            assertThat(a.faults().delegate().inspect(l.name()).block(STEP).owner()).isEqualTo(l.owner());
        }
        for (Lease l : leases) {
            l.release().block(STEP);
        }
    }

    @Test
    void badNamesAndOptionsAreRejectedAtCallTimeNamingTheArgument() {
        LockClient locks = newClient().locks();
        assertThatThrownBy(() -> locks.acquire(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> locks.acquire("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> locks.tryAcquire("x".repeat(1025))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name").hasMessageContaining("1024");
        assertThatThrownBy(() -> locks.hold("é".repeat(513))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> locks.observe("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> locks.withLock("a", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("body");
        assertThatThrownBy(() -> locks.acquire("a", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("options");
        assertThatThrownBy(() -> LockOptions.builder().leaseTime(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> LockOptions.builder().leaseTime(Duration.ofSeconds(-1))).hasMessageContaining("leaseTime");
        assertThatThrownBy(() -> LockOptions.builder().waitTimeout(Duration.ofMillis(-5))).hasMessageContaining("waitTimeout");
        assertThatThrownBy(() -> LockOptions.builder().requestTimeout(Duration.ZERO)).hasMessageContaining("requestTimeout");
        assertThatThrownBy(() -> LockOptions.builder().leaseTime(Duration.ofSeconds(1)).renewalInterval(Duration.ofSeconds(1)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("renewalInterval");
        assertThatThrownBy(() -> LockOptions.builder().renewalInterval(Duration.ZERO)).hasMessageContaining("renewalInterval");
        assertThatThrownBy(() -> LockOptions.builder().drift(0.7, Duration.ZERO)).hasMessageContaining("drift");
        assertThatThrownBy(() -> LockOptions.builder().backoff(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("backoff");
        assertThatThrownBy(() -> LockOptions.builder().backoff(Retry.backoff(3, Duration.ZERO)))
                .hasMessageContaining("backoff.minBackoff");
    }

    /**
     * A per-call lease time is either given to the lease (stores that take a TTL per grant) or
     * refused at call time naming {@code leaseTime} (stores whose leases live on the client's
     * session) — never silently replaced by another.
     */
    @Test
    void aPerCallLeaseTimeIsHonouredOrRefusedNeverIgnored() {
        String name = name("lease-time");
        TestClient a = newClient();
        Duration longer = options().leaseTime().multipliedBy(4);
        LockOptions perCall = options().mutate().leaseTime(longer).build();
        Mono<Lease> acquire;
        try {
            acquire = a.locks().acquire(name, perCall);
        } catch (IllegalArgumentException refused) {
            assertThat(refused).hasMessageContaining("leaseTime");
            assertThatThrownBy(() -> a.locks().withLock(name, perCall, l -> Mono.empty()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
            assertThatThrownBy(() -> a.locks().hold(name, perCall))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("leaseTime");
            Lease same = a.locks().acquire(name, options().mutate().waitTimeout(STEP).build()).block(STEP);
            assertThat(same).as("other per-call options with the client's lease time").isNotNull();
            same.release().block(STEP);
            return;
        }
        Lease lease = acquire.block(STEP);
        assertThat(lease).isNotNull();
        assertThat(lease.remaining()).as("validity of a lease asked for %s", longer)
                .isGreaterThan(options().leaseTime().multipliedBy(2));
        lease.release().block(STEP);
    }

    @Test
    @Tag(DEEP)
    void anUnreachableBackendGivesATypedErrorWithinTheTimeout() {
        LockOptions fast = options().mutate().requestTimeout(Duration.ofMillis(300)).waitTimeout(Duration.ofSeconds(1)).build();
        LockClient locks = LockClient.create(unreachableBackend(), fast);
        try {
            StepVerifier.create(locks.tryAcquire("unreachable"))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                            .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).isTrue()))
                    .verify(Duration.ofSeconds(3));
            StepVerifier.create(locks.acquire("unreachable"))
                    .expectError(LockBackendException.class)
                    .verify(Duration.ofSeconds(4));
            StepVerifier.create(locks.observe("unreachable"))
                    .expectError(LockBackendException.class)
                    .verify(Duration.ofSeconds(3));
        } finally {
            // close waits for the give-backs of the unanswered requests up to its bound (2 x 300 ms + grace),
            // then closes the store, whose driver may take seconds to give up on connections nobody answers
            locks.close().onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(20));
        }
    }

    // ---------------------------------------------------------------- close

    @Test
    void closeReleasesHeldLeasesAndFailsPendingAcquires() {
        String name = name("close");
        TestClient a = newClient();
        TestClient b = newClient();
        Lease held = a.locks().acquire(name).block(STEP);
        AtomicReference<Throwable> pending = new AtomicReference<>();
        b.locks().acquire(name).subscribe(null, pending::set);
        await().atMost(STEP).until(() -> b.faults().grantCalls() >= 1);
        b.locks().close().block(STEP);
        await().atMost(STEP).until(() -> pending.get() != null);
        assertThat(pending.get()).isInstanceOf(io.reactivelocks.LockClientClosedException.class);
        a.locks().close().block(STEP);
        assertThat(held.isValid()).isFalse();
        StepVerifier.create(a.locks().acquire(name)).expectError(io.reactivelocks.LockClientClosedException.class).verify(STEP);
    }

    /**
     * Cancels acquires (plain, try, hold and withLock) while their requests are in flight and
     * closes the client at once: close() must complete only after every such request settled and
     * its release was answered, so nothing is left on the store the moment it completes (the
     * leases are long: a leftover would still be there). 1,000 cancels in bursts of 200.
     */
    @Test
    @Tag(DEEP)
    void closeRightAfterCancelLeavesNothingOnTheStore() {
        LockOptions longLease = withLease(Duration.ofSeconds(30));
        LockBackend check = newBackend();
        List<String> left = new ArrayList<>();
        try {
            for (int burst = 0; burst < 5; burst++) {
                TestClient c = newClient(longLease);
                String warm = name("warm");
                c.locks().acquire(warm).flatMap(Lease::release).block(STEP); // connected
                List<String> burstNames = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    // not name(): the after-test check polls each of its names; this test checks its own
                    String n = "close-after-cancel-" + UUID.randomUUID();
                    burstNames.add(n);
                    Disposable d = switch (i % 4) {
                        case 0 -> c.locks().acquire(n).subscribe(null, e -> { });
                        case 1 -> c.locks().tryAcquire(n).subscribe(null, e -> { });
                        case 2 -> c.locks().hold(n).subscribe(null, e -> { });
                        default -> c.locks().withLock(n, l -> Mono.never()).subscribe(null, e -> { });
                    };
                    d.dispose();
                }
                c.locks().close().block(STEP);
                left.addAll(Flux.fromIterable(burstNames)
                        .flatMap(n -> check.inspect(n).map(h -> n), 16)
                        .collectList().block(STEP));
            }
        } finally {
            check.close().block(STEP);
        }
        assertThat(left).as("locks held on the store right after close, of 1000 cancelled acquires").isEmpty();
    }

    /**
     * Exercises a client (grants, releases, a renewed hold, a contended waiter that is cancelled,
     * observation), closes it, and checks that no timer of the client or of its store is still
     * scheduled, nor fires afterwards.
     */
    @Test
    @Tag(DEEP)
    void noTimerOutlivesClose() {
        TimerTrackingScheduler timers = TimerTrackingScheduler.wrap(Schedulers.parallel());
        LockOptions tracked = options().mutate().scheduler(timers).build();
        LockClient c = LockClient.create(newBackend(timers), tracked);
        TestClient other = newClient();
        String a = name("timers-a");
        String b = name("timers-b");
        try {
            for (int i = 0; i < 3; i++) {
                c.acquire(a).flatMap(Lease::release).block(STEP);
            }
            ConcurrentLinkedQueue<Lease> updates = new ConcurrentLinkedQueue<>();
            Disposable hold = c.hold(b).subscribe(updates::add, e -> { });
            await().atMost(STEP).until(() -> updates.size() >= 2); // renewed once
            Lease blocker = other.locks().acquire(a).block(STEP);
            Disposable observing = c.observe(a).subscribe(null, e -> { });
            Disposable waiter = c.acquire(a).subscribe(null, e -> { });
            StepVerifier.create(c.tryAcquire(a)).expectComplete().verify(STEP);
            waiter.dispose();
            observing.dispose();
            hold.dispose();
            blocker.release().block(STEP);
            c.acquire(a).flatMap(Lease::release).block(STEP); // a release just before the close
        } finally {
            c.close().block(STEP);
            timers.markClosed();
        }
        assertThat(timers.pendingTimers()).as("timers still scheduled after close").isEmpty();
        await().during(Duration.ofMillis(800)).atMost(Duration.ofSeconds(2))
                .until(() -> timers.timersRunAfterClose().isEmpty());
    }
}
