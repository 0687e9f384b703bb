package io.reactivelocks.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/** The in-memory fair lock on virtual time: FIFO grants, an abandoned waiter's deadline, a try that does not barge. */
class LocalFairLockVirtualTimeTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private VirtualTimeScheduler vts;
    private LocalLockStore store;
    private LockOptions options;
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        store = new LocalLockStore(vts, LockClock.of(vts));
        // a 10-minute backoff: only a notification, the line's hint or its refresh can wake a waiter
        options = LockOptions.builder()
                .leaseTime(Duration.ofSeconds(3))
                .waitTimeout(Duration.ofHours(1))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .scheduler(vts).clock(LockClock.of(vts))
                .build();
    }

    @AfterEach
    void tearDown() {
        clients.forEach(c -> c.close().block(VERIFY));
        assertThat(store.heldCount()).as("held locks left").isZero();
        assertThat(store.waiting("f")).as("waiters left").isZero();
        vts.dispose();
    }

    private LockClient client() {
        LockClient c = LocalFairLockBackend.client(store, options);
        clients.add(c);
        return c;
    }

    @Test
    void waitersAreGrantedInArrivalOrderWithIncreasingTokens() {
        Lease holder = client().acquire("f").block(VERIFY);
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        List<Disposable> subs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int index = i;
            subs.add(client().acquire("f").flatMap(l -> {
                order.add(index);
                tokens.add(l.token());
                return l.release();
            }).subscribe());
            assertThat(store.waiting("f")).isEqualTo(i + 1);
        }
        vts.advanceTimeBy(Duration.ofSeconds(30)); // the holder renews, the waiters refresh their entries
        assertThat(order).as("nobody passes the holder").isEmpty();
        assertThat(store.waiting("f")).isEqualTo(5);
        holder.release().block(VERIFY);
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(order).containsExactly(0, 1, 2, 3, 4);
        assertThat(tokens.get(0)).isGreaterThan(holder.token());
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
        subs.forEach(Disposable::dispose);
    }

    @Test
    void anAbandonedWaiterBlocksTheLineOnlyUntilItsDeadline() {
        Lease holder = client().acquire("f").block(VERIFY);
        Attempt a = new LocalFairLockBackend(store).tryGrant(new GrantRequest("f", GrantRequest.newOwner(),
                options.leaseTime(), true, LockClock.of(vts))).block(VERIFY);
        assertThat(a).isInstanceOf(Attempt.Queued.class); // its turn is never subscribed: never refreshed
        AtomicReference<Lease> next = new AtomicReference<>();
        Disposable sub = client().acquire("f").subscribe(next::set);
        assertThat(store.waiting("f")).isEqualTo(2);
        holder.release().block(VERIFY);
        assertThat(next.get()).as("the abandoned waiter is first in line").isNull();
        assertThat(client().tryAcquire("f").block(VERIFY)).as("a try does not pass the line").isNull();
        vts.advanceTimeBy(Duration.ofSeconds(6)); // the waiter deadline: twice the lease time
        assertThat(next.get()).as("granted once the abandoned entry expired").isNotNull();
        assertThat(next.get().token()).isGreaterThan(holder.token());
        next.get().release().block(VERIFY);
        sub.dispose();
    }

    @Test
    void aCancelledWaiterLeavesTheLineAtOnce() {
        Lease holder = client().acquire("f").block(VERIFY);
        Disposable first = client().acquire("f").subscribe();
        AtomicReference<Lease> second = new AtomicReference<>();
        Disposable sub = client().acquire("f").subscribe(second::set);
        assertThat(store.waiting("f")).isEqualTo(2);
        first.dispose();
        assertThat(store.waiting("f")).isEqualTo(1);
        holder.release().block(VERIFY);
        assertThat(second.get()).isNotNull();
        second.get().release().block(VERIFY);
        sub.dispose();
    }

    @Test
    void anExpiredHoldIsPassedToTheHeadOfTheLine() {
        Lease holder = client().acquire("f").block(VERIFY);
        Attempt dead = new LocalFairLockBackend(store).tryGrant(new GrantRequest("g", "dead-holder",
                Duration.ofSeconds(3), false, LockClock.of(vts))).block(VERIFY);
        assertThat(dead).isInstanceOf(Attempt.Granted.class); // a holder that died: granted, never renewed
        AtomicReference<Lease> next = new AtomicReference<>();
        Disposable sub = client().acquire("g").subscribe(next::set);
        vts.advanceTimeBy(Duration.ofMillis(2_999));
        assertThat(next.get()).isNull();
        vts.advanceTimeBy(Duration.ofMillis(2));
        assertThat(next.get()).as("granted on the expiry").isNotNull();
        next.get().release().block(VERIFY);
        holder.release().block(VERIFY);
        sub.dispose();
    }
}
