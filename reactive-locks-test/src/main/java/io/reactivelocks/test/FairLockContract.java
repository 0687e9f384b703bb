package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The contract of a fair (FIFO) lock: a {@link LockClient} whose waiters are granted in arrival
 * order. A store's test extends this class and supplies independent clients to the same store
 * ({@link #newClient()}) and a few store-level views: how many waiters are queued, an abandoned
 * waiter, and what is left on the server. Tests run in real time against the real store.
 */
public abstract class FairLockContract {

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);

    private final List<LockClient> clients = new ArrayList<>();
    private final Set<String> names = Collections.synchronizedSet(new LinkedHashSet<>());

    /** @return a new fair lock client with its own connections to the store under test */
    protected abstract LockClient newClient();

    /**
     * @param name a lock name
     * @return how many waiters are queued on the store behind the holder of {@code name} (not
     *         counting the holder); only asked while a live client holds the lock
     */
    protected abstract int waiting(String name);

    /**
     * Queues a waiter for {@code name} on the store that then stops for good, as a frozen or
     * partitioned process would: it never asks again nor releases. Its entry must expire by the
     * store's waiter deadline (session or waiter lease).
     *
     * @param name a lock name
     */
    protected abstract void enqueueAbandonedWaiter(String name);

    /**
     * Checks with the store's own client that nothing of {@code name} is left on the server
     * (no hold, no queue entry); fencing counters may stay.
     *
     * @param name a lock name the test used
     */
    protected abstract void assertNothingLeft(String name);

    /** @return how long an abandoned waiter may block the queue at most (its deadline plus slack) */
    protected Duration abandonedWaiterBound() {
        return Duration.ofSeconds(8);
    }

    /** @return the options of every call: a short lease, a bounded wait */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofMillis(1500))
                .requestTimeout(Duration.ofSeconds(2))
                .waitTimeout(Duration.ofSeconds(15))
                .build();
    }

    /**
     * @param prefix a readable prefix
     * @return a lock name unique to this run, checked after the test
     */
    protected String name(String prefix) {
        String n = prefix + "-" + UUID.randomUUID();
        names.add(n);
        return n;
    }

    private LockClient client() {
        LockClient c = newClient();
        clients.add(c);
        return c;
    }

    @AfterEach
    void closeClientsAndCheckNothingLeft() {
        for (LockClient c : clients) {
            c.close().block(STEP);
        }
        clients.clear();
        try {
            for (String n : names) {
                await().atMost(STEP).untilAsserted(() -> assertNothingLeft(n));
            }
        } finally {
            names.clear();
        }
    }

    private void awaitWaiting(String name, int n) {
        await().atMost(STEP).pollInterval(Duration.ofMillis(20))
                .untilAsserted(() -> assertThat(waiting(name)).as("waiters queued on '%s'", name).isEqualTo(n));
    }

    @Test
    void waitersAreGrantedInArrivalOrderWithIncreasingTokens() {
        String name = name("fifo");
        Lease holder = client().acquire(name, options()).block(STEP);
        assertThat(holder).isNotNull();
        int n = 5;
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<Long> tokens = new CopyOnWriteArrayList<>();
        List<Disposable> subs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            subs.add(client().acquire(name, options())
                    .flatMap(lease -> {
                        order.add(index);
                        tokens.add(lease.token());
                        return lease.release();
                    })
                    .subscribe());
            awaitWaiting(name, i + 1); // enqueued before the next one starts
        }
        holder.release().block(STEP);
        await().atMost(STEP).until(() -> order.size() == n);
        assertThat(order).as("grant order").containsExactly(0, 1, 2, 3, 4);
        assertThat(tokens.get(0)).isGreaterThan(holder.token());
        assertThat(tokens).as("tokens in grant order").isSorted().doesNotHaveDuplicates();
        subs.forEach(Disposable::dispose);
    }

    @Test
    void anAbandonedWaiterExpiresInsteadOfBlockingTheQueue() {
        String name = name("abandoned");
        Lease holder = client().acquire(name, options()).block(STEP);
        assertThat(holder).isNotNull();
        enqueueAbandonedWaiter(name);
        awaitWaiting(name, 1);
        AtomicReference<Lease> next = new AtomicReference<>();
        Disposable sub = client().acquire(name, options()).subscribe(next::set);
        awaitWaiting(name, 2);
        holder.release().block(STEP);
        await().atMost(abandonedWaiterBound()).until(() -> next.get() != null);
        assertThat(next.get().token()).isGreaterThan(holder.token());
        next.get().release().block(STEP);
        sub.dispose();
    }

    @Test
    void aCancelledWaiterLeavesTheQueueAtOnce() {
        String name = name("cancelled");
        Lease holder = client().acquire(name, options()).block(STEP);
        assertThat(holder).isNotNull();
        Disposable first = client().acquire(name, options()).subscribe();
        awaitWaiting(name, 1);
        AtomicReference<Lease> second = new AtomicReference<>();
        Disposable sub = client().acquire(name, options()).subscribe(second::set);
        awaitWaiting(name, 2);
        first.dispose();
        // well before the cancelled waiter's own deadline (a lease time or more) could pass
        await().atMost(Duration.ofMillis(1000)).pollInterval(Duration.ofMillis(20))
                .untilAsserted(() -> assertThat(waiting(name)).as("waiters after a cancel").isEqualTo(1));
        holder.release().block(STEP);
        await().atMost(Duration.ofMillis(1000)).until(() -> second.get() != null);
        assertThat(second.get().token()).isGreaterThan(holder.token());
        second.get().release().block(STEP);
        sub.dispose();
    }

    @Test
    void tryAcquireDoesNotPassWaitersNorJoinTheQueue() {
        String name = name("barge");
        LockClient tryer = client();
        Lease holder = client().acquire(name, options()).block(STEP);
        assertThat(holder).isNotNull();
        enqueueAbandonedWaiter(name);
        awaitWaiting(name, 1);
        assertThat(tryer.tryAcquire(name, options()).blockOptional(STEP)).as("try while held").isEmpty();
        assertThat(waiting(name)).as("a try does not queue").isEqualTo(1);
        holder.release().block(STEP);
        // free, but the (abandoned) waiter is first in line until its entry expires
        assertThat(tryer.tryAcquire(name, options()).blockOptional(STEP)).as("try past a waiter").isEmpty();
        AtomicReference<Lease> got = new AtomicReference<>();
        await().atMost(abandonedWaiterBound()).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    tryer.tryAcquire(name, options()).blockOptional(STEP).ifPresent(got::set);
                    return got.get() != null;
                });
        assertThat(got.get().token()).isGreaterThan(holder.token());
        got.get().release().block(STEP);
    }

    /**
     * Bursts of fair-lock acquires of every kind, each cancelled while its request is in flight, then
     * the client closed at once: no holder or queued waiter of any of them may be left right after close.
     */
    @Test
    void closeRightAfterCancelLeavesNothingOnTheStore() {
        for (int burst = 0; burst < 3; burst++) {
            LockClient c = newClient();
            c.acquire(name("warm")).flatMap(Lease::release).block(STEP); // connected
            List<String> burstNames = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                String n = "close-after-cancel-" + UUID.randomUUID();
                burstNames.add(n);
                Disposable d = switch (i % 4) {
                    case 0 -> c.acquire(n).subscribe(null, e -> { });
                    case 1 -> c.tryAcquire(n).subscribe(null, e -> { });
                    case 2 -> c.hold(n).subscribe(null, e -> { });
                    default -> c.withLock(n, l -> reactor.core.publisher.Mono.never()).subscribe(null, e -> { });
                };
                d.dispose();
            }
            c.close().block(STEP);
            for (String n : burstNames) {
                assertNothingLeft(n);
            }
        }
    }
}
