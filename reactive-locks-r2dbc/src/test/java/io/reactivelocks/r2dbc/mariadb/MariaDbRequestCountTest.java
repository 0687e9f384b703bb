package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.Connection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * How many statements the server receives per operation, counted by the server itself
 * ({@code Questions} of {@code SHOW GLOBAL STATUS}, which counts every statement a client sends,
 * transaction control included). Each bound is the count of today's statements, written out where
 * the statements are named; a change that adds a round trip fails here. The class runs alone
 * ({@link Isolated}: the counter is the whole server's), its poller never ticks during a count (an
 * hour's interval: releases through the session wake its waiters at once), and every count is the
 * mean over several operations after a warm-up (schema, pooled connections).
 */
@Isolated
class MariaDbRequestCountTest {

    private static final Duration STEP = Duration.ofSeconds(30);
    private static final int PAIRS = 20;
    private static final int WAITERS = 8;

    private static MariaDbLockOptions options;
    private static LockStore store;
    /** One connection kept open for reading the counter: opening one sends statements of its own. */
    private static Connection probe;
    /** What reading the counter adds to it (the {@code SHOW GLOBAL STATUS} itself). */
    private static long probeCost;
    /** How often the counter was read. */
    private static long reads;

    @BeforeAll
    static void open() {
        options = MariaDbTestSupport.options("requestcounts").mutate().pollInterval(Duration.ofHours(1)).build();
        store = MariaDbLocks.connect(MariaDbTestSupport.factory(), options);
        probe = Mono.from(MariaDbTestSupport.factory().create()).block(STEP);
        long a = questions();
        long b = questions();
        long c = questions();
        probeCost = Math.max(b - a, c - b);
        assertThat(probeCost).isBetween(0L, 1L);
    }

    @AfterAll
    static void close() {
        store.close().block(STEP);
        Mono.from(probe.close()).block(STEP);
    }

    /** Mutex, uncontended: acquire + release. */
    @Test
    void mutexPair() {
        LockClient locks = store.locks(LockOptions.defaults());
        // the grant's INSERT .. ON DUPLICATE KEY UPDATE .. RETURNING (acquire.sql, autocommit); the release's DELETE
        assertThat(perPair("mutex", locks::acquire)).isLessThanOrEqualTo(2.0);
    }

    /** Semaphore of 3 permits, uncontended: one permit acquired + released. */
    @Test
    void semaphorePair() {
        Semaphore permits = store.semaphores(LockOptions.defaults());
        // SET TRANSACTION ISOLATION LEVEL and START TRANSACTION (the driver's), the guard row's INSERT .. ON DUPLICATE
        // KEY UPDATE, the purge's DELETE, the permits' SELECT .. FOR UPDATE, the permit's INSERT .. RETURNING (its
        // token drawn there), COMMIT; the release's DELETE
        assertThat(perPair("semaphore", n -> permits.acquire(n, 3))).isLessThanOrEqualTo(8.0);
    }

    /** Read-write lock, uncontended: a read acquired + released, a write acquired + released. */
    @Test
    void readWritePairs() {
        ReadWriteLock rw = store.readWriteLocks(ReadWriteLockOptions.defaults());
        // SET TRANSACTION ISOLATION LEVEL and START TRANSACTION (the driver's), the guard row's INSERT .. ON DUPLICATE
        // KEY UPDATE, the purge's DELETE, the grants' SELECT, the grant's INSERT .. ON DUPLICATE KEY UPDATE ..
        // RETURNING (in place of an intent; its token drawn there), COMMIT; the release's DELETE
        assertThat(perPair("read", n -> rw.read().acquire(n))).isLessThanOrEqualTo(8.0);
        assertThat(perPair("write", n -> rw.write().acquire(n))).isLessThanOrEqualTo(8.0);
    }

    /** Fair lock, uncontended: acquire + release. */
    @Test
    void fairPair() {
        LockClient fair = store.fairLocks(LockOptions.defaults());
        // the grant's fair_acquire.sql (nobody in line: nothing to leave); the release's DELETE of the lock row
        assertThat(perPair("fair", fair::acquire)).isLessThanOrEqualTo(2.0);
    }

    /**
     * Fair lock with {@value #WAITERS} waiters in line: the holder releases, and each waiter in turn is
     * granted and releases. Per handoff (a release and the next grant).
     */
    @Test
    void fairHandoffs() {
        LockClient fair = store.fairLocks(LockOptions.defaults());
        String name = "handoff";
        fair.acquire(name).flatMap(Lease::release).block(STEP); // warm-up
        Lease holder = fair.acquire(name).block(STEP);
        List<Mono<Void>> turns = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            Mono<Void> turn = fair.acquire(name).flatMap(Lease::release).cache();
            turn.subscribe(null, e -> { });
            turns.add(turn);
        }
        // all in line at once (their places are the server's order); the asks of joining end before the count
        Awaitility.await().atMost(STEP).until(() -> waiting(name) == WAITERS);
        long before = settled();
        long readsBefore = reads;
        holder.release().block(STEP);
        Flux.merge(turns).blockLast(STEP);
        long statements = sent(before, readsBefore);
        System.out.printf("statements per fair handoff with %d waiters: %.2f%n", WAITERS, (double) statements / WAITERS);
        // the holder's release (DELETE); then per waiter: its grant (fair_acquire.sql), its leaving the line
        // (fair_leave_purge.sql) and its release (DELETE) — only the head of the line asks on each release
        assertThat(statements).isLessThanOrEqualTo(1 + 3 * WAITERS);
    }

    private static double perPair(String label, Function<String, Mono<Lease>> acquire) {
        String name = "pair-" + label;
        for (int i = 0; i < 3; i++) { // warm-up: tables, pooled connections
            acquire.apply(name).flatMap(Lease::release).block(STEP);
        }
        long before = settled();
        long readsBefore = reads;
        for (int i = 0; i < PAIRS; i++) {
            acquire.apply(name).flatMap(Lease::release).block(STEP);
        }
        double perPair = (double) sent(before, readsBefore) / PAIRS;
        System.out.printf("statements per %s pair: %.2f%n", label, perPair);
        return perPair;
    }

    /** The statements sent since the counter read {@code before}, the counter's own reads since then taken off. */
    private static long sent(long before, long readsBefore) {
        long after = settled();
        return after - before - probeCost * (reads - readsBefore);
    }

    private static long waiting(String name) {
        return ((Number) MariaDbTestSupport.sql("SELECT COUNT(*) AS n FROM requestcounts.reactive_locks_waiters WHERE name = ?",
                StoredText.encode(name)).get(0).get("n")).longValue();
    }

    /** The counter once nothing else is sent: two reads 100 ms apart that differ by the reads alone. */
    private static long settled() {
        long[] last = {questions()};
        Awaitility.await().atMost(STEP).pollInterval(Duration.ofMillis(100)).until(() -> {
            long now = questions();
            boolean quiet = now - last[0] <= probeCost;
            last[0] = now;
            return quiet;
        });
        return last[0];
    }

    private static long questions() {
        reads++;
        Long q = Flux.from(probe.createStatement("SHOW GLOBAL STATUS LIKE 'Questions'").execute())
                .concatMap(r -> r.map((row, md) -> Long.parseLong(String.valueOf(row.get(1)))))
                .blockFirst(STEP);
        assertThat(q).isNotNull();
        return q;
    }
}
