package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.util.retry.Retry;

/**
 * Requests per operation as the server under test counts them (its own counter, never a timing, so
 * the figures hold on a loaded machine): an uncontended acquire + release of each concept, one
 * renewal tick of one lease, and a handoff to the next of several queued waiters. A store's test
 * extends it, supplies a session to a server of its own ({@link #connect}), the server's count
 * ({@link #serverRequests}) and today's count of each operation ({@link #requestsPer}) as an upper
 * bound, so that a change that makes an operation send more requests fails the build.
 *
 * <p>A server that also counts the <em>commands</em> it runs inside those requests (the commands of a
 * Lua script, the reads and writes of a transaction) is checked the same way ({@link #serverCommands},
 * {@link #commandsPer}): a request that asks the server to do more work fails the build as well, though
 * the request count stays the same.
 *
 * <p>Nothing else may count: every lease and session is long enough ({@link #LONG}) that no renewal,
 * keep-alive or ping falls inside a counted window, except in the renewal test, whose short lease is
 * the point; each window starts and ends when the server's count has stopped moving, so no request
 * of the set-up and none still in flight is counted or missed. What a store's client sends on a
 * timer of its own that a window cannot always keep out is bounded by {@link #allowance}.
 */
public abstract class RequestCountContract {

    /** Generous bound for one step against a real store on a busy machine. */
    protected static final Duration STEP = Duration.ofSeconds(20);
    /** Lease (or session TTL) of the counted clients: no renewal, keep-alive or ping inside a test. */
    protected static final Duration LONG = Duration.ofSeconds(60);
    /** Lease (or session TTL) of the renewal test: a renewal tick every second, a quiet moment between two. */
    protected static final Duration SHORT = Duration.ofSeconds(3);
    /** Acquire + release pairs counted per concept. */
    protected static final int PAIRS = 40;
    /** Waiters queued behind the holder: a chain of that many handoffs. */
    protected static final int WAITERS = 6;

    /** Permits held at once by the client of {@link Operation#PERMIT_RENEWAL}, each on a name of its own. */
    protected static final int RENEWED_PERMITS = 10;

    /** The operations counted, each with the number of times one test repeats it. */
    public enum Operation {
        /** An uncontended acquire + release of a lock ({@link LockStore#locks}). */
        LOCK_PAIR(PAIRS),
        /** One renewal tick of one held lease. */
        RENEWAL_TICK(1),
        /** One handoff in a chain: a release and the next waiter's grant (each grantee releases at once). */
        HANDOFF(WAITERS),
        /** An uncontended acquire + release of one permit ({@link LockStore#semaphores}). */
        SEMAPHORE_PAIR(PAIRS),
        /** An uncontended acquire + release of a read lock ({@link LockStore#readWriteLocks}). */
        READ_PAIR(PAIRS),
        /** An acquire + release of a read lock while another reader holds the name (readers among readers). */
        READ_BESIDE_READER_PAIR(PAIRS),
        /** An uncontended acquire + release of a write lock. */
        WRITE_PAIR(PAIRS),
        /** An uncontended acquire + release of a fair lock ({@link LockStore#fairLocks}). */
        FAIR_PAIR(PAIRS),
        /**
         * The renewal of one permit while one client holds {@link #RENEWED_PERMITS} on as many names (their
         * renewals converge onto one tick: a store that renews a batch in one request sends a fraction).
         */
        PERMIT_RENEWAL(RENEWED_PERMITS);

        private final int times;

        Operation(int times) {
            this.times = times;
        }

        /** @return how many times a test repeats the operation */
        public int times() {
            return times;
        }
    }

    private final List<LockStore> opened = new ArrayList<>();
    /** The request counts by kind at the latest quiet reading and at the one before it. */
    private Map<String, Long> kindsAt = Map.of();
    private Map<String, Long> kindsBefore = Map.of();
    /** The server's command count at the latest quiet reading and at the one before it (-1: not counted). */
    private long commandsAt = -1;
    private long commandsBefore = -1;

    /**
     * @param leaseTime the lease time of the session's clients; a store that renews by session makes
     *                  its session last that long (or confirms it every third of it)
     * @return a new session (its own connections) to the server under test
     */
    protected abstract LockStore connect(Duration leaseTime);

    /**
     * @return the requests the server has received so far, by its own counter; the reads of the
     *         counter itself are not among them
     */
    protected abstract long serverRequests();

    /**
     * @param operation an operation
     * @return the requests one such operation sends today (an average where a chain shares them):
     *         the bound each test asserts
     */
    protected abstract double requestsPer(Operation operation);

    /**
     * @param operation an operation
     * @return requests a test of it may count besides the operations themselves, where the store's
     *         client sends something on a timer that a window cannot always keep out (bounded, and
     *         said why by the store's test); 0 by default
     */
    protected long allowance(Operation operation) {
        return 0;
    }

    /**
     * @return the server's request counts by kind (method, command), by its own counters, for the
     *         report of each counted window: a bound that fails then says which request was extra;
     *         empty (the default) when the store's test does not tell them apart
     */
    protected Map<String, Long> requestsByKind() {
        return Map.of();
    }

    /**
     * @return the commands the server has run so far inside the requests it received — the commands of its
     *         scripts, the reads and writes of its transactions — by its own counter; -1 (the default) when the
     *         server does not count them apart from its requests (each request is then one command)
     */
    protected long serverCommands() {
        return -1;
    }

    /**
     * @param operation an operation
     * @return the commands one such operation has the server run today (an average where a chain shares them):
     *         the bound each test asserts when {@link #serverCommands} counts them
     */
    protected double commandsPer(Operation operation) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " counts server commands: say how many per "
                + operation);
    }

    /**
     * @param leaseTime the lease time
     * @return the options of every counted client: that lease, and a backoff of 10 minutes, so that
     *         only the store's notification can wake a waiter
     */
    protected LockOptions options(Duration leaseTime) {
        return LockOptions.builder().leaseTime(leaseTime).requestTimeout(Duration.ofSeconds(5))
                .waitTimeout(Duration.ofSeconds(30))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
    }

    /**
     * @param prefix a readable prefix
     * @return a name unique to this run
     */
    protected static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    /**
     * @param leaseTime the lease time of its clients
     * @return a new session, closed after the test
     */
    protected LockStore store(Duration leaseTime) {
        LockStore s = connect(leaseTime);
        opened.add(s);
        return s;
    }

    /** Closes the sessions of the test (a subclass that checks what is left after them calls it first). */
    @AfterEach
    protected void closeSessions() {
        for (LockStore s : opened) {
            s.close().block(STEP);
        }
        opened.clear();
    }

    /**
     * Waits until the server's count has not moved for two reads in a row, 200 ms apart: what was
     * sent before has arrived, and nothing runs in the background.
     *
     * @return the count then
     */
    protected long quietCount() {
        return quietCountAfter(Duration.ofMillis(200));
    }

    /**
     * @param first how long to wait before the first reading
     * @return the server's request count once two readings 200 ms apart agree
     */
    protected long quietCountAfter(Duration first) {
        AtomicLong seen = new AtomicLong(-1);
        await().atMost(STEP.plus(first)).pollDelay(first).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    long now = serverRequests();
                    return seen.getAndSet(now) == now;
                });
        // a counted window runs from one quiet reading to the next: its kinds are the difference of the two
        kindsBefore = kindsAt;
        kindsAt = requestsByKind();
        commandsBefore = commandsAt;
        commandsAt = serverCommands();
        return seen.get();
    }

    /**
     * Checks the requests counted for {@link Operation#times()} operations against today's bound,
     * and that each operation was counted at all (at least one request each).
     */
    private void check(Operation op, long requests) {
        check(op, requests, op.times());
    }

    /** @return the requests by kind between the last two quiet readings (the counted window), none unchanged */
    private Map<String, Long> windowKinds() {
        Map<String, Long> kinds = new TreeMap<>();
        kindsAt.forEach((kind, n) -> {
            long d = n - kindsBefore.getOrDefault(kind, 0L);
            if (d != 0) {
                kinds.put(kind, d);
            }
        });
        return kinds;
    }

    private void check(Operation op, long requests, int times) {
        check(op, requests, times, times);
    }

    /** @param least the fewest requests that count as the operations having been sent at all */
    private void check(Operation op, long requests, int times, long least) {
        double per = requestsPer(op);
        long bound = Math.round(per * times) + allowance(op);
        Map<String, Long> kinds = windowKinds();
        System.out.printf("%s %s: %d requests for %d = %.2f each (bound %d)%s%n", getClass().getSimpleName(), op,
                requests, times, (double) requests / times, bound, kinds.isEmpty() ? "" : " " + kinds);
        assertThat(requests).as("%s: requests for %d (today %.2f each) %s", op, times, per, kinds)
                .isBetween(least, bound);
        if (commandsAt >= 0 && commandsBefore >= 0) {
            // the same window: the commands the server ran inside those requests
            long commands = commandsAt - commandsBefore;
            double perCommand = commandsPer(op);
            long commandBound = Math.round(perCommand * times);
            System.out.printf("%s %s: %d server commands for %d = %.2f each (bound %d)%n", getClass().getSimpleName(), op,
                    commands, times, (double) commands / times, commandBound);
            assertThat(commands).as("%s: server commands for %d (today %.2f each)", op, times, perCommand)
                    .isLessThanOrEqualTo(commandBound); // a keep-alive runs none: no lower bound
        }
    }

    /** Counts {@link #PAIRS} acquire + release pairs, after one that opens what the session opens once. */
    private void countPairs(Operation op, Supplier<Lease> acquire) {
        acquire.get().release().block(STEP); // connections, subscriptions, schema: once per session
        long before = quietCount();
        long lastToken = 0;
        for (int i = 0; i < PAIRS; i++) {
            Lease l = acquire.get();
            assertThat(l.token()).as("fencing token of pair %d", i).isGreaterThan(lastToken);
            lastToken = l.token();
            l.release().block(STEP);
        }
        check(op, quietCount() - before);
    }

    @Test
    void anUncontendedLockAcquireAndRelease() {
        LockClient locks = store(LONG).locks(options(LONG));
        String name = name("pair");
        countPairs(Operation.LOCK_PAIR, () -> locks.acquire(name).block(STEP));
    }

    @Test
    void anUncontendedSemaphorePermitAcquireAndRelease() {
        Semaphore semaphores = store(LONG).semaphores(options(LONG));
        String name = name("permit");
        countPairs(Operation.SEMAPHORE_PAIR, () -> semaphores.acquire(name, 3).block(STEP));
    }

    @Test
    void anUncontendedReadLockAcquireAndRelease() {
        ReadWriteLock rw = store(LONG).readWriteLocks(options(LONG));
        String name = name("read");
        countPairs(Operation.READ_PAIR, () -> rw.read().acquire(name).block(STEP));
    }

    /** Readers among readers: a reader holds the name throughout, and each counted reader is let in beside it. */
    @Test
    void aReadLockAcquireAndReleaseBesideAnotherReader() {
        ReadWriteLock rw = store(LONG).readWriteLocks(options(LONG));
        String name = name("readers");
        Lease other = rw.read().acquire(name).block(STEP);
        countPairs(Operation.READ_BESIDE_READER_PAIR, () -> rw.read().acquire(name).block(STEP));
        other.release().block(STEP);
    }

    @Test
    void anUncontendedWriteLockAcquireAndRelease() {
        ReadWriteLock rw = store(LONG).readWriteLocks(options(LONG));
        String name = name("write");
        countPairs(Operation.WRITE_PAIR, () -> rw.write().acquire(name).block(STEP));
    }

    @Test
    void anUncontendedFairLockAcquireAndRelease() {
        LockClient fair = store(LONG).fairLocks(options(LONG));
        String name = name("fair");
        countPairs(Operation.FAIR_PAIR, () -> fair.acquire(name).block(STEP));
    }

    /**
     * A lease of {@link #SHORT} renewed every second, on a session that does nothing else: the requests
     * from a quiet moment after one renewal to a quiet moment after the next, per renewal confirmed
     * in between (a store that renews by session confirms its session or the lease's node).
     */
    @Test
    void aRenewalTickOfOneLease() {
        AtomicInteger renewed = new AtomicInteger();
        LockClient locks = store(SHORT).locks(options(SHORT), new LockListener() {
            @Override
            public void onRenewed(String name, long token) {
                renewed.incrementAndGet();
            }
        });
        Lease lease = locks.acquire(name("renewed")).block(STEP);
        await().atMost(STEP).pollInterval(Duration.ofMillis(10)).until(() -> renewed.get() >= 1);
        long before = quietCount();
        int from = renewed.get();
        await().atMost(STEP).pollInterval(Duration.ofMillis(10)).until(() -> renewed.get() > from);
        long requests = quietCount() - before;
        int ticks = renewed.get() - from;
        assertThat(lease.isValid()).isTrue();
        lease.release().block(STEP);
        check(Operation.RENEWAL_TICK, requests, ticks);
    }

    /**
     * {@link #RENEWED_PERMITS} permits on as many names, held by one client with a lease of {@link #SHORT}
     * (renewed every second): the requests from a quiet moment once their renewals have converged onto one
     * tick to a quiet moment at least one tick later, per permit renewed in between (as the listener hears
     * of them). A store that renews a batch in one request sends
     * a fraction of a request per permit.
     */
    @Test
    void theRenewalOfSeveralPermitsHeldAtOnce() {
        AtomicInteger renewals = new AtomicInteger();
        Semaphore semaphores = store(SHORT).semaphores(options(SHORT).mutate().listener(new LockListener() {
            @Override
            public void onRenewed(String name, long token) {
                renewals.incrementAndGet();
            }
        }).build());
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < RENEWED_PERMITS; i++) {
            held.add(semaphores.acquire(name("renewed-permit-" + i), 1).block(STEP));
        }
        // two rounds of renewals, so that the first has brought the leases' batches together
        await().atMost(STEP).pollInterval(Duration.ofMillis(10)).until(() -> renewals.get() >= 2 * RENEWED_PERMITS);
        long before = quietCount();
        int from = renewals.get();
        await().atMost(STEP).pollInterval(Duration.ofMillis(10)).until(() -> renewals.get() - from >= RENEWED_PERMITS);
        long requests = quietCount() - before;
        int renewed = renewals.get() - from;
        assertThat(held).allMatch(Lease::isValid);
        Flux.fromIterable(held).concatMap(Lease::release).blockLast(STEP);
        // a batch may renew every permit in one request: at least one request in all, not one per permit
        check(Operation.PERMIT_RENEWAL, requests, renewed, 1);
    }

    /**
     * One holder and {@link #WAITERS} waiters on one client, queued one at a time; then the holder
     * releases and each waiter, once granted, releases at once: the requests of the chain. Only
     * notifications can wake a waiter (a 10-minute backoff), so the chain ending proves that none
     * needed the backoff.
     */
    @Test
    void aHandoffToTheNextOfSeveralQueuedWaiters() throws InterruptedException {
        handoff(options(LONG));
    }

    /**
     * The same chain with a backoff that would poll every 20 ms: once a waiter's release notifications are
     * live, its timer waits for the holder's TTL or a safety net (the backoff's cap or a third of the lease
     * time), not for the next backoff step — so waiters in line send nothing (the counts before and after are
     * quiet) and no waiter asks again between the release that frees the lock and its own turn.
     */
    @Test
    void aHandoffWithAFastBackoffSendsNoPolls() throws InterruptedException {
        handoff(LockOptions.builder().leaseTime(LONG).requestTimeout(Duration.ofSeconds(5))
                .waitTimeout(Duration.ofSeconds(30))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(20)).maxBackoff(Duration.ofMillis(20)))
                .build());
    }

    private void handoff(LockOptions options) throws InterruptedException {
        LockClient locks = store(LONG).locks(options);
        // connections, subscriptions: as many at once as the chain may use (a pool opens them as needed)
        String warm = name("warm");
        Flux.range(0, WAITERS + 1).flatMap(i -> locks.acquire(warm + i)).collectList().block(STEP)
                .forEach(l -> l.release().block(STEP));
        String name = name("handoff");
        Lease holder = locks.acquire(name).block(STEP);
        CountDownLatch granted = new CountDownLatch(WAITERS);
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        List<Disposable> waits = new ArrayList<>();
        try {
            for (int i = 0; i < WAITERS; i++) {
                waits.add(locks.acquire(name)
                        .flatMap(l -> {
                            tokens.add(l.token());
                            return l.release();
                        })
                        .subscribe(null, errors::add, granted::countDown));
                // queue one at a time, each behind the one before it
                quietCount();
            }
            assertThat(locks.metrics().pendingAcquireCount()).as("waiting").isEqualTo(WAITERS);
            long before = quietCount();
            holder.release().block(STEP);
            assertThat(granted.await(STEP.toMillis(), TimeUnit.MILLISECONDS))
                    .as("every waiter granted by notification alone (errors %s)", errors).isTrue();
            // the name's subscription closes a linger (1 s) after its last waiter left: counted too
            long requests = quietCountAfter(Duration.ofMillis(1_200)) - before;
            assertThat(errors).isEmpty();
            assertThat(tokens).hasSize(WAITERS).isSorted().doesNotHaveDuplicates();
            assertThat(tokens.get(0)).isGreaterThan(holder.token());
            check(Operation.HANDOFF, requests);
        } finally {
            waits.forEach(Disposable::dispose);
        }
    }
}
