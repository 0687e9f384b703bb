package io.reactivelocks;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The client's live view of held leases and pending acquires, on the in-memory store and virtual time. */
class LockClientMetricsTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private VirtualTimeScheduler vts;
    private LockClient a;
    private LockClient b;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        LockClock clock = LockClock.of(vts);
        LocalLockStore store = new LocalLockStore(vts, clock);
        LockOptions options = LockOptions.builder().leaseTime(Duration.ofSeconds(30)).drift(0, Duration.ZERO)
                .scheduler(vts).clock(clock).build();
        a = LockClient.create(new LocalLockBackend(store), options);
        b = LockClient.create(new LocalLockBackend(store), options);
    }

    @AfterEach
    void tearDown() {
        a.close().block(VERIFY);
        b.close().block(VERIFY);
        vts.dispose();
    }

    @Test
    void showsEachHeldLeaseWithItsTokenAndRemainingTime() {
        LockClientMetrics metrics = a.metrics();
        assertThat(metrics.heldLeases()).isEmpty();
        Lease first = a.acquire("x").block(VERIFY);
        Lease second = a.acquire("y").block(VERIFY);
        assertThat(metrics.heldLeaseCount()).isEqualTo(2);
        assertThat(metrics.heldLeases()).extracting(Lease::name, Lease::owner, Lease::token)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("x", first.owner(), first.token()),
                        org.assertj.core.groups.Tuple.tuple("y", second.owner(), second.token()));
        vts.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(metrics.heldLeases()).allSatisfy(l -> assertThat(l.remaining()).isEqualTo(Duration.ofSeconds(25)));
        vts.advanceTimeBy(Duration.ofSeconds(6)); // past the first renewal at 10 s
        assertThat(metrics.heldLeases()).allSatisfy(l -> assertThat(l.remaining()).isEqualTo(Duration.ofSeconds(29)));
        first.release().block(VERIFY);
        assertThat(metrics.heldLeases()).extracting(Lease::name).containsExactly("y");
        second.release().block(VERIFY);
        assertThat(metrics.heldLeaseCount()).isZero();
        assertThat(metrics.heldLeases()).isEmpty();
        assertThat(a.metrics()).isSameAs(metrics);
    }

    @Test
    void showsWaitingAcquiresUntilTheyAreGrantedOrCancelled() {
        Lease held = a.acquire("x").block(VERIFY);
        AtomicReference<Lease> granted = new AtomicReference<>();
        Disposable waiter = b.acquire("x").subscribe(granted::set);
        Disposable cancelled = b.acquire("x").subscribe();
        assertThat(b.metrics().pendingAcquires()).containsExactly("x", "x");
        assertThat(b.metrics().pendingAcquireCount()).isEqualTo(2);
        assertThat(b.metrics().heldLeases()).isEmpty();
        cancelled.dispose();
        assertThat(b.metrics().pendingAcquires()).containsExactly("x");
        held.release().block(VERIFY);
        vts.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(granted.get()).isNotNull();
        assertThat(b.metrics().pendingAcquireCount()).isZero();
        assertThat(b.metrics().pendingAcquires()).isEmpty();
        assertThat(b.metrics().heldLeases()).extracting(Lease::token).containsExactly(granted.get().token());
        granted.get().release().block(VERIFY);
        waiter.dispose();
    }
}
