package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.rwlock.ReadWriteState;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
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
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * The contract every read-write lock store passes. A store's test extends this class and supplies
 * {@link #newStore()}: each call must return an independent store (its own connections) to the
 * same server, so that several locks contend as separate processes would. Leases are short (see
 * {@link #options()}); after each test no grant and no waiting writer's intent of the test's names
 * may be left, as the store's own client reads it.
 */
public abstract class ReadWriteLockContract {

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);

    private final List<ReadWriteLock> locks = new ArrayList<>();
    private final Set<String> names = Collections.synchronizedSet(new LinkedHashSet<>());

    /** @return a new, independent store (its own connections) to the server under test */
    protected abstract ReadWriteStore newStore();

    /** @return options for the tests: short lease and request timeout, a drift allowance for a loaded machine */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofMillis(1200))
                .requestTimeout(Duration.ofSeconds(2))
                .drift(0.05, Duration.ofMillis(20))
                .build();
    }

    /**
     * @param options the options
     * @return a new lock over {@link #newStore()}, closed after the test
     */
    protected ReadWriteLock newLock(ReadWriteLockOptions options) {
        ReadWriteLock l = ReadWriteLock.create(newStore(), options);
        locks.add(l);
        return l;
    }

    /** @return a new writer-preferring lock over {@link #newStore()} with {@link #options()} */
    protected ReadWriteLock newLock() {
        return newLock(ReadWriteLockOptions.of(options()));
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
        for (ReadWriteLock l : locks) {
            l.close().block(STEP);
        }
        locks.clear();
        ReadWriteStore check = newStore();
        try {
            for (String n : names) {
                await().atMost(STEP).untilAsserted(() ->
                        assertThat(check.holders(n).block(STEP).isEmpty()).as("grants or intents of '%s' left after the test", n).isTrue());
            }
        } finally {
            check.close().block(STEP);
            names.clear();
        }
    }

    /**
     * Connects each lock first (a first request opens connections and subscriptions), so the test
     * measures grants, not set-up.
     */
    private void warm(ReadWriteLock... fleet) {
        for (ReadWriteLock l : fleet) {
            l.write().tryAcquire(name("warm-up")).flatMap(Lease::release).block(STEP);
        }
    }

    private static void pause(Duration d) {
        StepVerifier.create(Mono.delay(d)).expectNextCount(1).expectComplete().verify(STEP);
    }

    @Test
    void readersShareAndObserveSeesThem() {
        String name = name("share");
        ReadWriteLock a = newLock();
        ReadWriteLock b = newLock();
        warm(a, b);
        Lease r1 = a.read().acquire(name).block(STEP);
        Lease r2 = b.read().tryAcquire(name).block(STEP);
        assertThat(r2).as("a second reader enters").isNotNull();
        assertThat(r2.token()).isNotEqualTo(r1.token());
        ReadWriteState s = a.observe(name).blockFirst(STEP);
        assertThat(s.readers()).extracting(ReadWriteState.Holder::owner).containsExactlyInAnyOrder(r1.owner(), r2.owner());
        assertThat(s.writer()).isNull();
        r1.release().block(STEP);
        r2.release().block(STEP);
    }

    @Test
    void aWriterExcludesReadersAndWriters() {
        String name = name("excl");
        ReadWriteLock a = newLock();
        ReadWriteLock b = newLock();
        Lease w = a.write().acquire(name).block(STEP);
        StepVerifier.create(b.read().tryAcquire(name)).as("reader while a writer holds").expectComplete().verify(STEP);
        StepVerifier.create(b.write().tryAcquire(name)).as("writer while a writer holds").expectComplete().verify(STEP);
        ReadWriteState s = b.observe(name).blockFirst(STEP);
        assertThat(s.writer()).isNotNull().extracting(ReadWriteState.Holder::owner).isEqualTo(w.owner());
        assertThat(s.readers()).isEmpty();
        w.release().block(STEP);
        Lease r = b.read().tryAcquire(name).block(STEP);
        assertThat(r).isNotNull();
        StepVerifier.create(a.write().tryAcquire(name)).as("writer while a reader holds").expectComplete().verify(STEP);
        r.release().block(STEP);
    }

    @Test
    void aWaitingWriterBlocksNewReadersAndTokensFenceBoth() {
        String name = name("prefer-writers");
        ReadWriteLock a = newLock();
        ReadWriteLock b = newLock();
        ReadWriteLock c = newLock();
        warm(a, b, c);
        Lease r1 = a.read().acquire(name).block(STEP);
        AtomicReference<Lease> w = new AtomicReference<>();
        Disposable writer = b.write().acquire(name).subscribe(w::set);
        try {
            await().atMost(STEP).untilAsserted(() ->
                    assertThat(c.observe(name).blockFirst(STEP).waitingWriters()).as("the writer's intent").hasSize(1));
            StepVerifier.create(c.read().tryAcquire(name)).as("new reader while a writer waits").expectComplete().verify(STEP);
            AtomicReference<Lease> r2 = new AtomicReference<>();
            Disposable reader = c.read().acquire(name).subscribe(r2::set);
            r1.release().block(STEP);
            await().atMost(STEP).until(() -> w.get() != null);
            assertThat(w.get().token()).as("the writer's token exceeds the reader's it excluded").isGreaterThan(r1.token());
            assertThat(r2.get()).as("the later reader waits for the writer").isNull();
            w.get().release().block(STEP);
            await().atMost(STEP).until(() -> r2.get() != null);
            assertThat(r2.get().token()).as("the reader's token exceeds the last writer's").isGreaterThan(w.get().token());
            r2.get().release().block(STEP);
            reader.dispose();
        } finally {
            writer.dispose();
        }
    }

    @Test
    void readerPreferringLetsReadersPastAWaitingWriter() {
        String name = name("prefer-readers");
        ReadWriteLockOptions readers = ReadWriteLockOptions.of(options()).withPreference(ReadWriteLockOptions.Preference.READERS);
        ReadWriteLock a = newLock(readers);
        ReadWriteLock b = newLock(readers);
        warm(a, b);
        Lease r1 = a.read().acquire(name).block(STEP);
        AtomicReference<Lease> w = new AtomicReference<>();
        Disposable writer = b.write().acquire(name).subscribe(w::set);
        try {
            pause(Duration.ofMillis(300)); // the writer asked and waits
            assertThat(b.observe(name).blockFirst(STEP).waitingWriters()).as("no intent when readers go first").isEmpty();
            Lease r2 = a.read().tryAcquire(name).block(STEP);
            assertThat(r2).as("a new reader enters while the writer waits").isNotNull();
            assertThat(w.get()).isNull();
            r1.release().block(STEP);
            r2.release().block(STEP);
            await().atMost(STEP).until(() -> w.get() != null);
            assertThat(w.get().token()).isGreaterThan(Math.max(r1.token(), r2.token()));
            w.get().release().block(STEP);
        } finally {
            writer.dispose();
        }
    }

    @Test
    void neverAWriterBesideAnyoneWhenManyRace() {
        String name = name("race");
        // a longer lease: the race is about exclusion, and 24 callers on a loaded machine may wait long for a grant
        ReadWriteLockOptions longer = ReadWriteLockOptions.of(options().mutate().leaseTime(Duration.ofSeconds(6)).build());
        List<ReadWriteLock> fleet = List.of(newLock(longer), newLock(longer), newLock(longer));
        warm(fleet.toArray(ReadWriteLock[]::new));
        AtomicInteger readers = new AtomicInteger();
        AtomicInteger writers = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        ConcurrentLinkedQueue<long[]> grants = new ConcurrentLinkedQueue<>(); // mode (1 = write), token
        List<Mono<Void>> all = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            ReadWriteLock l = fleet.get(i % fleet.size());
            boolean write = i % 4 == 0;
            AtomicInteger mine = write ? writers : readers;
            all.add((write ? l.write() : l.read()).withLock(name, lease -> {
                mine.incrementAndGet();
                if (writers.get() > 1 || writers.get() == 1 && readers.get() > 0) {
                    violations.incrementAndGet();
                }
                grants.add(new long[] {write ? 1 : 0, lease.token()});
                return Mono.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(2, 15)))
                        .doOnNext(x -> done.incrementAndGet())
                        .then(Mono.fromRunnable(mine::decrementAndGet))
                        .doOnCancel(mine::decrementAndGet)
                        .then();
            }).subscribeOn(Schedulers.parallel()));
        }
        Flux.merge(all).then().block(Duration.ofSeconds(60));
        assertThat(done).hasValue(24);
        assertThat(violations).as("a writer beside another holder").hasValue(0);
        assertThat(grants).extracting(g -> g[1]).doesNotHaveDuplicates();
    }

    /**
     * Three writers and three readers, each its own lock over its own store, all asking at the same
     * moment, round after round, under either preference: every request must be granted within a
     * bounded wait (no two callers may end up waiting for each other), never a writer beside anyone,
     * every token distinct.
     *
     * @param preference the lock's preference
     */
    @ParameterizedTest(name = "{0} preferred")
    @EnumSource(ReadWriteLockOptions.Preference.class)
    void writersAndReadersAskingAtOnceAreAllGranted(ReadWriteLockOptions.Preference preference) {
        String name = name("rw-race");
        int rounds = 5;
        LockOptions bounded = options().mutate().waitTimeout(Duration.ofSeconds(20)).build();
        ReadWriteLockOptions lockOptions = ReadWriteLockOptions.of(bounded).withPreference(preference);
        List<ReadWriteLock.Access> callers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ReadWriteLock l = newLock(lockOptions);
            warm(l);
            callers.add(i < 3 ? l.write() : l.read());
        }
        AtomicInteger readers = new AtomicInteger();
        AtomicInteger writers = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger granted = new AtomicInteger();
        ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();
        Sinks.Empty<Void> start = Sinks.empty();
        List<Mono<Void>> all = new ArrayList<>();
        for (ReadWriteLock.Access side : callers) {
            boolean write = side.mode() == LockMode.WRITE;
            AtomicInteger mine = write ? writers : readers;
            all.add(start.asMono().publishOn(Schedulers.parallel()).then(Flux.range(0, rounds)
                    .concatMap(round -> side.withLock(name, bounded, lease -> {
                        mine.incrementAndGet();
                        if (writers.get() > 1 || writers.get() == 1 && readers.get() > 0) {
                            violations.incrementAndGet();
                        }
                        granted.incrementAndGet();
                        tokens.add(lease.token());
                        return Mono.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(1, 5)))
                                .then(Mono.fromRunnable(mine::decrementAndGet))
                                .doOnCancel(mine::decrementAndGet)
                                .then();
                    }))
                    .then()));
        }
        StepVerifier.create(Flux.merge(all).then())
                .then(start::tryEmitEmpty)
                .expectComplete()
                .verify(Duration.ofSeconds(60));
        assertThat(granted).as("requests granted").hasValue(callers.size() * rounds);
        assertThat(violations).as("a writer beside another holder").hasValue(0);
        assertThat(tokens).doesNotHaveDuplicates();
    }

    @Test
    void tokensFollowTheRuleAcrossReadersAndWriters() {
        String name = name("tokens");
        ReadWriteLock a = newLock();
        ReadWriteLock b = newLock();
        long lastWriter = Long.MIN_VALUE;
        long highestReader = Long.MIN_VALUE;
        for (int i = 0; i < 6; i++) {
            Lease r1 = a.read().acquire(name).block(STEP);
            Lease r2 = b.read().acquire(name).block(STEP);
            for (Lease r : List.of(r1, r2)) {
                assertThat(r.token()).as("reader of round %d after the last writer", i).isGreaterThan(lastWriter);
                highestReader = Math.max(highestReader, r.token());
            }
            r1.release().block(STEP);
            r2.release().block(STEP);
            Lease w = (i % 2 == 0 ? a : b).write().acquire(name).block(STEP);
            assertThat(w.token()).as("writer of round %d after its readers", i).isGreaterThan(highestReader).isGreaterThan(lastWriter);
            lastWriter = w.token();
            w.release().block(STEP);
        }
    }

    @Test
    void aCrashedWritersGrantExpiresAndAReaderGetsIn() {
        String name = name("crash");
        ReadWriteStore raw = holderStore();
        try {
            // a writer that died: granted on the store, never renewed, never released
            PermitGrant g = raw.tryGrant(name, "dead-" + UUID.randomUUID(), LockMode.WRITE, true, false, Duration.ofMillis(1500)).block(STEP);
            assertThat(g).isInstanceOf(PermitGrant.Granted.class);
            crash(raw);
            long deadToken = ((PermitGrant.Granted) g).tokens().get(0);
            ReadWriteLock a = newLock();
            long t0 = System.nanoTime();
            Lease got = a.read().acquire(name).block(STEP);
            assertThat(got.token()).isGreaterThan(deadToken);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("waited for the expiry").isGreaterThan(Duration.ofMillis(500));
            got.release().block(STEP);
        } finally {
            raw.close().block(STEP);
        }
    }

    /** @return the store of the holder that {@link #aCrashedWritersGrantExpiresAndAReaderGetsIn} lets die; {@link #newStore()} by default */
    protected ReadWriteStore holderStore() {
        return newStore();
    }

    /**
     * Makes the holder of {@code store} die without releasing. The default does nothing: a holder
     * that stops renewing is dead to a store that expires grants by their lease time. Stores whose
     * grants live as long as a session cut that session off the server here.
     *
     * @param store a store from {@link #holderStore()}
     */
    protected void crash(ReadWriteStore store) {
    }

    @Test
    void aWritersReleaseWakesEveryWaitingReaderByNotification() {
        String name = name("wake");
        LockOptions slow = options().mutate()
                .leaseTime(Duration.ofSeconds(60))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        ReadWriteLock a = newLock(ReadWriteLockOptions.of(slow));
        ReadWriteLock b = newLock(ReadWriteLockOptions.of(slow));
        Lease held = a.write().acquire(name).block(STEP);
        ConcurrentLinkedQueue<Lease> got = new ConcurrentLinkedQueue<>();
        Disposable r1 = b.read().acquire(name).subscribe(got::add);
        Disposable r2 = b.read().acquire(name).subscribe(got::add);
        try {
            pause(Duration.ofMillis(500)); // the readers asked, were refused and park (their store subscription live)
            assertThat(got).isEmpty();
            held.release().block(STEP);
            await().atMost(Duration.ofSeconds(5)).until(() -> got.size() == 2);
            assertThat(got).allSatisfy(l -> assertThat(l.token()).isGreaterThan(held.token()));
        } finally {
            r1.dispose();
            r2.dispose();
            got.forEach(l -> l.release().block(STEP));
        }
    }

    @Test
    void cancelAtRandomMomentsLeavesNothingOnTheStore() {
        String name = name("cancel");
        ReadWriteLock a = newLock();
        ReadWriteLock b = newLock();
        ReadWriteStore raw = newStore();
        try {
            for (int i = 0; i < cancelRounds(); i++) {
                // sometimes cancel while waiting (a waiting writer leaves an intent to clean up)
                Lease blocker = i % 3 == 0 ? (i % 2 == 0 ? b.read() : b.write()).acquire(name).block(STEP) : null;
                ReadWriteLock.Access side = i % 4 < 2 ? a.write() : a.read();
                Disposable d = i % 2 == 0
                        ? side.hold(name).subscribeOn(Schedulers.parallel()).subscribe()
                        : side.withLock(name, l -> Mono.never()).subscribeOn(Schedulers.parallel()).subscribe();
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
                        .untilAsserted(() -> assertThat(raw.holders(name).block(STEP).isEmpty()).as("left after round %d", round).isTrue());
            }
        } finally {
            raw.close().block(STEP);
        }
    }

    /** @return how many rounds {@link #cancelAtRandomMomentsLeavesNothingOnTheStore} runs */
    protected int cancelRounds() {
        return 16;
    }

    @Test
    void upgradeAndReentryFailFastInsideAScope() {
        String name = name("upgrade");
        ReadWriteLock a = newLock();
        StepVerifier.create(a.withReadLock(name, l -> a.write().acquire(name)))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalStateException.class).hasMessageContaining("upgrad"))
                .verify(STEP);
        StepVerifier.create(a.withWriteLock(name, l -> a.read().tryAcquire(name)))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalStateException.class).hasMessageContaining("reentrant"))
                .verify(STEP);
        String other = name("other");
        StepVerifier.create(a.withReadLock(name, l -> a.withWriteLock(other, w -> Mono.just(w.token()))))
                .as("another name is fine").expectNextCount(1).expectComplete().verify(STEP);
    }

    @Test
    void badArgumentsFailAtCallTime() {
        ReadWriteLock a = newLock();
        assertThatThrownBy(() -> a.read().acquire(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> a.write().acquire("x".repeat(1025))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> a.withReadLock("n", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("body");
        assertThatThrownBy(() -> ReadWriteLockOptions.of(options()).withPreference(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("preference");
    }

    /**
     * Bursts of 200 read and write acquires of every kind, each cancelled while its request is in
     * flight, then the lock closed at once: no grant or writer's intent of any of them may be left on
     * the store right after close.
     */
    @Test
    void closeRightAfterCancelLeavesNothingOnTheStore() {
        LockOptions longLease = options().mutate().leaseTime(Duration.ofSeconds(30)).build();
        ReadWriteStore check = newStore();
        List<String> left = new ArrayList<>();
        try {
            for (int burst = 0; burst < 5; burst++) {
                ReadWriteLock l = ReadWriteLock.create(newStore(), ReadWriteLockOptions.of(longLease));
                l.read().tryAcquire(name("warm")).flatMap(Lease::release).block(STEP); // connected
                List<String> burstNames = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    String n = "close-after-cancel-" + (i % 6) + "-" + UUID.randomUUID();
                    burstNames.add(n);
                    Disposable d = switch (i % 6) {
                        case 0 -> l.read().acquire(n).subscribe(null, e -> { });
                        case 1 -> l.write().acquire(n).subscribe(null, e -> { });
                        case 2 -> l.read().tryAcquire(n).subscribe(null, e -> { });
                        case 3 -> l.write().tryAcquire(n).subscribe(null, e -> { });
                        case 4 -> l.holdWrite(n).subscribe(null, e -> { });
                        default -> l.withReadLock(n, x -> Mono.never()).subscribe(null, e -> { });
                    };
                    d.dispose();
                }
                l.close().block(STEP);
                // the name says which kind of acquire it was (i % 6 above); the holders what was left
                left.addAll(Flux.fromIterable(burstNames)
                        .flatMap(n -> check.holders(n).filter(h -> !h.isEmpty()).map(h -> n + " " + h), 16)
                        .collectList().block(STEP));
            }
        } finally {
            check.close().block(STEP);
        }
        assertThat(left).as("read-write locks with grants or intents right after close, of 1000 cancelled acquires").isEmpty();
    }
}
