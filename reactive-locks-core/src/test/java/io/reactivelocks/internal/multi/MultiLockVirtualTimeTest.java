package io.reactivelocks.internal.multi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.multi.MultiLock;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/** The multi-lock engine on the in-memory store, on virtual time. */
class MultiLockVirtualTimeTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private VirtualTimeScheduler vts;
    private LocalLockStore store;
    private LockBackend raw;
    private LockOptions options;
    private LockClient clientA;
    private LockClient clientB;
    private MultiLock a;
    private MultiLock b;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        store = new LocalLockStore(vts, LockClock.of(vts));
        raw = new LocalLockBackend(store);
        options = LockOptions.builder()
                .leaseTime(Duration.ofSeconds(3))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(10)).maxBackoff(Duration.ofMillis(500)).jitter(0))
                .scheduler(vts).clock(LockClock.of(vts))
                .build();
        clientA = LocalLockBackend.client(store, options);
        clientB = LocalLockBackend.client(store, options);
        a = MultiLock.create(clientA);
        b = MultiLock.create(clientB);
    }

    @AfterEach
    void tearDown() {
        clientA.close().block(VERIFY);
        clientB.close().block(VERIFY);
        assertThat(store.heldCount()).as("locks left in the store").isZero();
        vts.dispose();
    }


    @Test
    void namesAreTakenInUtf8ByteOrderWithDuplicatesCollapsedAndATokenEach() {
        // UTF-16 order would put "\uFFFF" after "😀" (a surrogate pair, 0xD83D...); UTF-8 puts it before (EF.. < F0..)
        List<String> given = List.of("b", "😀", "\uFFFF", "a", "b", "B", "é");
        assertThat(io.reactivelocks.multi.MultiLock.canonicalOrder(given)).containsExactly("B", "a", "b", "é", "\uFFFF", "😀");
        MultiLease set = a.acquire(given).block(VERIFY);
        assertThat(set.names()).containsExactly("B", "a", "b", "é", "\uFFFF", "😀");
        assertThat(set.leases()).extracting(Lease::name).containsExactlyElementsOf(set.names());
        assertThat(set.leases()).extracting(Lease::owner).doesNotHaveDuplicates();
        for (String n : set.names()) {
            assertThat(raw.inspect(n).block(VERIFY).token()).isEqualTo(set.token(n));
        }
        assertThat(set.isValid()).isTrue();
        assertThat(set.remaining()).isPositive();
        assertThatThrownBy(() -> set.lease("c")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("c");
        set.release().block(VERIFY);
        assertThat(store.heldCount()).isZero();
        assertThat(set.isValid()).isFalse();
        set.release().block(VERIFY); // idempotent
    }

    @Test
    void twoCallersWithReversedOrdersBothFinish() {
        List<String> order = new ArrayList<>();
        Mono<String> first = a.withLocks(List.of("x", "y", "z"), set ->
                Mono.delay(Duration.ofSeconds(1), vts).doOnNext(t -> order.add("a")).thenReturn("a"));
        Mono<String> second = b.withLocks(List.of("z", "y", "x"), set ->
                Mono.delay(Duration.ofSeconds(1), vts).doOnNext(t -> order.add("b")).thenReturn("b"));
        StepVerifier.withVirtualTime(() -> Mono.zip(first, second), () -> vts, Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(3))
                .assertNext(t -> assertThat(List.of(t.getT1(), t.getT2())).containsExactly("a", "b"))
                .expectComplete()
                .verify(VERIFY);
        assertThat(order).hasSize(2);
    }

    @Test
    void tryAcquireIsAllOrNothing() {
        Lease blocker = clientB.acquire("m").block(VERIFY);
        StepVerifier.create(a.tryAcquire(List.of("k", "l", "m", "n"))).expectComplete().verify(VERIFY);
        for (String n : List.of("k", "l", "n")) {
            assertThat(raw.inspect(n).blockOptional(VERIFY)).as("lock %s after a refused set", n).isEmpty();
        }
        assertThat(raw.inspect("m").block(VERIFY).owner()).isEqualTo(blocker.owner());
        blocker.release().block(VERIFY);
        MultiLease set = a.tryAcquire(List.of("k", "l", "m", "n")).block(VERIFY);
        assertThat(set).isNotNull();
        assertThat(set.token("m")).isGreaterThan(blocker.token());
        set.release().block(VERIFY);
    }

    @Test
    void cancelWhileWaitingHalfWayReleasesWhatWasTaken() {
        Lease blocker = clientB.acquire("q").block(VERIFY);
        StepVerifier.withVirtualTime(() -> a.acquire(List.of("r", "p", "q")), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(5))
                .then(() -> assertThat(raw.inspect("p").block(VERIFY)).as("p taken, waiting for q").isNotNull())
                .then(() -> assertThat(raw.inspect("r").blockOptional(VERIFY)).as("r not yet asked for").isEmpty())
                .thenCancel()
                .verify(VERIFY);
        assertThat(raw.inspect("p").blockOptional(VERIFY)).as("p after the cancel").isEmpty();
        assertThat(clientA.metrics().heldLeaseCount()).isZero();
        blocker.release().block(VERIFY);
    }

    @Test
    void theWaitTimeoutBoundsTheWholeSetAndReleasesWhatWasTaken() {
        Lease blocker = clientB.acquire("t2").block(VERIFY);
        LockOptions twoSeconds = options.mutate().waitTimeout(Duration.ofSeconds(2)).build();
        StepVerifier.withVirtualTime(() -> a.acquire(List.of("t1", "t2"), twoSeconds), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofMillis(1_999))
                .then(() -> assertThat(raw.inspect("t1").block(VERIFY)).isNotNull())
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockTimeoutException.class)
                        .satisfies(x -> assertThat(((LockTimeoutException) x).lockName()).isEqualTo("t2"))
                        .satisfies(x -> assertThat(((LockTimeoutException) x).waitTimeout()).isEqualTo(Duration.ofSeconds(2))))
                .verify(VERIFY);
        assertThat(raw.inspect("t1").blockOptional(VERIFY)).as("t1 after the timeout").isEmpty();
        blocker.release().block(VERIFY);
    }

    @Test
    void losingOneLeaseCancelsTheBodyWithLockLostExceptionAndReleasesTheOthers() {
        AtomicReference<MultiLease> inside = new AtomicReference<>();
        AtomicInteger cancelled = new AtomicInteger();
        StepVerifier.withVirtualTime(() -> a.withLocks(List.of("u", "v", "w"), set -> {
                    inside.set(set);
                    return Mono.<String>never().doOnCancel(cancelled::incrementAndGet);
                }), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> raw.release("v", inside.get().lease("v").owner()).block(VERIFY)) // the store forgets v
                .thenAwait(Duration.ofSeconds(1)) // the next renewal (every lease/3) learns it
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockLostException.class)
                        .satisfies(x -> assertThat(((LockLostException) x).lockName()).isEqualTo("v")))
                .verify(VERIFY);
        assertThat(cancelled).hasValue(1);
        assertThat(inside.get().isValid()).isFalse();
        for (String n : List.of("u", "w")) {
            assertThat(raw.inspect(n).blockOptional(VERIFY)).as("%s after the loss", n).isEmpty();
        }
    }

    @Test
    void anAcquiredSetReleasesTheRestWhenOneLeaseIsLost() {
        MultiLease set = a.acquire(List.of("f", "g")).block(VERIFY);
        AtomicInteger lost = new AtomicInteger();
        set.lost().subscribe(null, null, lost::incrementAndGet);
        raw.release("f", set.lease("f").owner()).block(VERIFY);
        vts.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(lost).hasValue(1);
        assertThat(set.isValid()).isFalse();
        assertThat(raw.inspect("g").blockOptional(VERIFY)).as("g released after f was lost").isEmpty();
        set.release().block(VERIFY);
    }

    @Test
    void holdEmitsTheSetOnceAndCompletesWhenALeaseIsLost() {
        AtomicReference<MultiLease> held = new AtomicReference<>();
        StepVerifier.withVirtualTime(() -> a.hold(List.of("h1", "h2")), () -> vts, Long.MAX_VALUE)
                .consumeNextWith(held::set)
                .thenAwait(Duration.ofSeconds(30)) // renewed all along
                .then(() -> assertThat(held.get().isValid()).isTrue())
                .then(() -> raw.release("h2", held.get().lease("h2").owner()).block(VERIFY))
                .thenAwait(Duration.ofSeconds(1))
                .expectComplete()
                .verify(VERIFY);
        assertThat(store.heldCount()).isZero();
    }

    @Test
    void cancellingTheHoldStreamReleasesEveryLease() {
        StepVerifier.withVirtualTime(() -> a.hold(List.of("h1", "h2")), () -> vts, Long.MAX_VALUE)
                .expectNextCount(1)
                .then(() -> assertThat(store.heldCount()).isEqualTo(2))
                .thenCancel()
                .verify(VERIFY);
        assertThat(store.heldCount()).isZero();
    }

    @Test
    void withLocksReentersNamesHeldByAnEnclosingWithLock() {
        Mono<List<Long>> nested = clientA.withLock("outer", outer ->
                a.withLocks(List.of("inner", "outer"), set -> Mono.just(List.of(outer.token(), set.token("outer"), set.token("inner")))));
        StepVerifier.create(nested)
                .assertNext(t -> assertThat(t.get(1)).isEqualTo(t.get(0)))
                .expectComplete().verify(VERIFY);
        assertThat(store.heldCount()).isZero();
        StepVerifier.create(a.withLocksMany(List.of("s1", "s2"), options, set -> reactor.core.publisher.Flux.fromIterable(set.names())))
                .expectNext("s1", "s2").expectComplete().verify(VERIFY);
    }

    @Test
    void badArgumentsFailAtCallTime() {
        assertThatThrownBy(() -> a.acquire(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("names");
        assertThatThrownBy(() -> a.acquire(List.of())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names");
        assertThatThrownBy(() -> a.tryAcquire(Arrays.asList("a", null))).isInstanceOf(NullPointerException.class).hasMessageContaining("names[1]");
        assertThatThrownBy(() -> a.withLocks(List.of("a", ""), s -> Mono.empty())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names[1]");
        assertThatThrownBy(() -> a.hold(List.of("x".repeat(1025)))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names[0]");
        assertThatThrownBy(() -> a.acquire(List.of("a"), null)).isInstanceOf(NullPointerException.class).hasMessageContaining("options");
        assertThatThrownBy(() -> a.withLocks(List.of("a"), null)).isInstanceOf(NullPointerException.class).hasMessageContaining("body");
        assertThatThrownBy(() -> MultiLock.create(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("client");
    }
}
