package io.reactivelocks.r2dbc.mariadb;

import static io.reactivelocks.r2dbc.mariadb.MariaDbTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.RequestCountContract;
import io.reactivelocks.test.server.MariaDbServer;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Requests per operation as MariaDB counts them, on a server of this class alone: its
 * {@code Questions} status (every statement a client sends), less the reads of it, made on one
 * connection opened before anything is counted. Besides the contract: a fair lock's chain of
 * handoffs with several waiters in line, which must wake the head of the line only.
 */
class MariaDbRequestCountTest extends RequestCountContract {

    /** Waiters of the fair-lock chain. */
    private static final int FAIR_WAITERS = 8;

    private static MariaDbServer db;
    private static ConnectionFactory factory;
    private static Connection counter;
    private static long reads;

    @BeforeAll
    static void startServer() {
        db = MariaDbServer.start();
        factory = MariaDbTestSupport.factory(db);
        counter = Mono.from(factory.create()).block(TIMEOUT);
        Mono.from(counter.createStatement("CREATE DATABASE request_counts").execute())
                .flatMap(r -> Mono.from(r.getRowsUpdated())).block(TIMEOUT);
    }

    @AfterAll
    static void stopServer() {
        if (counter != null) {
            Mono.from(counter.close()).block(TIMEOUT);
        }
        if (db != null) {
            db.close();
        }
    }

    @Override
    protected LockStore connect(Duration leaseTime) {
        return MariaDbLocks.connect(factory, MariaDbLockOptions.builder().database("request_counts").poolMaxSize(4)
                .pollInterval(Duration.ofMinutes(10)).build());
    }

    @Override
    protected synchronized long serverRequests() {
        long questions = Mono.from(counter.createStatement("SHOW GLOBAL STATUS LIKE 'Questions'").execute())
                .flatMap(r -> Mono.from(r.map((row, md) -> Long.parseLong(row.get(1, String.class)))))
                .block(TIMEOUT);
        reads++; // the SHOW itself is a question, counted before it answers
        return questions - reads;
    }

    @Override
    protected double requestsPer(Operation operation) {
        return switch (operation) {
            // acquire: one autocommit INSERT .. ON DUPLICATE KEY UPDATE .. RETURNING (acquire.sql); release: one DELETE
            case LOCK_PAIR -> 2;
            // acquire: one anonymous compound statement (semaphore_grant.sql, BEGIN NOT ATOMIC) that runs the READ
            // COMMITTED grant transaction inside the server (the statements inside a compound statement are not
            // Questions); release: one DELETE
            case SEMAPHORE_PAIR -> 2;
            // as the semaphore (rwlock_grant.sql)
            case READ_PAIR, READ_BESIDE_READER_PAIR, WRITE_PAIR -> 2;
            // acquire: fair_acquire.sql, the lock's statement with the line checked in it (nobody in line: nothing to
            // leave); release: the lock row's DELETE (the owner was never in line: no waiter row to delete)
            case FAIR_PAIR -> 2;
            // one UPDATE renews every lease due in the tick
            // one compound statement renews every permit due in the tick (RenewBatch: up to 64 per request)
            case PERMIT_RENEWAL -> 1.0 / RENEWED_PERMITS;
            case RENEWAL_TICK -> 1;
            // per handoff the release (announced to the waiters of this backend without a statement) and the woken
            // waiter's grant statement; the chain adds the last grantee's release: 2 * 6 + 1 = 13
            case HANDOFF -> (2.0 * WAITERS + 1) / WAITERS;
        };
    }

    /**
     * A fair lock with {@value #FAIR_WAITERS} waiters put in line one after the other: the holder
     * releases, and each waiter, once granted, releases at once. Only the head of the line asks on each release (no herd):
     * the holder's release, then per waiter its grant (which takes it out of the line) and its release.
     */
    @Test
    void aFairLockHandoffWakesTheHeadOfTheLineOnly() {
        LockClient fair = store(LONG).fairLocks(options(LONG));
        String name = name("fair-handoff");
        fair.acquire(name).flatMap(Lease::release).block(STEP); // connections, tables
        Lease holder = fair.acquire(name).block(STEP);
        assertThat(holder).isNotNull();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<Mono<Void>> turns = new ArrayList<>();
        long beforeJoining = quietCount();
        for (int i = 0; i < FAIR_WAITERS; i++) {
            Mono<Void> turn = fair.acquire(name).flatMap(l -> {
                tokens.add(l.token());
                return l.release();
            }).cache();
            turn.subscribe(null, e -> { });
            turns.add(turn);
            int inLine = i + 1;
            await().atMost(STEP).until(() -> fair.metrics().pendingAcquireCount() == inLine);
            // one at a time, each joined and quiet before the next asks, so that the joins' requests are exact. The
            // next waiter used to start as soon as the previous one was pending, before its join and re-check were
            // answered: on a loaded machine they overlapped, and a CI run counted 25 — one more ask, from a wake
            // that reached a waiter with a request in flight, or a transaction of two that lock the name's row rolled
            // back and sent again (ask() retries those); not reproduced under two CPU hogs, where it is 24 every time
            quietCount();
        }
        // all in line (their places are the server's order); the asks of joining end before the count
        await().atMost(STEP).until(() -> fair.metrics().pendingAcquireCount() == FAIR_WAITERS);
        long before = quietCount();
        // joining, per waiter: the one-statement attempt (fair_acquire.sql), the one that puts it in line
        // (fair_join.sql, a compound statement), and the engine's one re-check once the waiter listens to the
        // name (fair_join.sql again: a waiter in line asks with it alone) — 3 (it was 2 x 10 with the
        // 9-statement transaction in place of fair_join.sql)
        System.out.printf("%s fair joins: %d requests for %d%n", getClass().getSimpleName(), before - beforeJoining, FAIR_WAITERS);
        assertThat(before - beforeJoining).as("requests of %d waiters joining the line", FAIR_WAITERS)
                .isEqualTo(3L * FAIR_WAITERS);
        holder.release().block(STEP);
        Flux.merge(turns).blockLast(STEP);
        long requests = quietCount() - before;
        System.out.printf("%s fair handoffs: %d requests for %d = %.2f each%n", getClass().getSimpleName(), requests,
                FAIR_WAITERS, (double) requests / FAIR_WAITERS);
        assertThat(tokens).hasSize(FAIR_WAITERS).isSorted().doesNotHaveDuplicates();
        assertThat(tokens.get(0)).isGreaterThan(holder.token());
        assertThat(requests).as("fair handoffs (the holder's release, then grant + release per waiter)")
                .isBetween((long) FAIR_WAITERS, 1 + 2L * FAIR_WAITERS);
    }

    /**
     * A window claim and a fenced write are one request each: the claim one compound statement
     * (window_claim.sql), the write one INSERT .. ON DUPLICATE KEY UPDATE .. RETURNING (fenced_values_write.sql).
     */
    @Test
    void aWindowClaimAndAFencedWriteAreOneRequestEach() {
        LockStore store = store(LONG);
        WindowLock windows = store.windowLocks(options(LONG));
        FencedValues values = store.fencedValues();
        String name = name("window");
        windows.tryClaim(name, Duration.ofDays(1)).block(STEP); // connections, tables
        values.write(name, 1, "warm-up").block(STEP);
        long before = quietCount();
        for (int i = 0; i < PAIRS; i++) {
            windows.tryClaim(name + "-" + i, Duration.ofDays(1)).block(STEP);
        }
        assertThat(quietCount() - before).as("requests of %d window claims", PAIRS).isEqualTo(PAIRS);
        before = quietCount();
        for (int i = 0; i < PAIRS; i++) {
            assertThat(values.write(name, 2 + i, "v" + i).block(STEP)).isTrue();
        }
        assertThat(values.write(name, 1, "stale").block(STEP)).as("a stale token's write").isFalse();
        assertThat(quietCount() - before).as("requests of %d fenced writes", PAIRS + 1).isEqualTo(PAIRS + 1);
    }

    /**
     * A capture is one request however many tasks it claims (task_capture.sql: one compound statement whose
     * result sets are the claimed tasks and, when it claimed fewer than asked for, the queue's next expiry).
     */
    @Test
    void aTaskCaptureIsOneRequest() {
        TaskQueue tasks = store(LONG).taskQueue(options(LONG));
        String queue = name("tasks");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            ids.add("task-" + i);
        }
        assertThat(tasks.registerAll(queue, ids, 1).block(STEP)).isEqualTo(12);
        List<TaskClaim> warm = tasks.tryCapture(queue, 1).collectList().block(STEP); // connections
        assertThat(warm).hasSize(1);
        long before = quietCount();
        List<TaskClaim> five = tasks.tryCapture(queue, 5).collectList().block(STEP);
        assertThat(quietCount() - before).as("requests of a capture of 5").isEqualTo(1);
        before = quietCount();
        List<TaskClaim> rest = tasks.tryCapture(queue, 10).collectList().block(STEP);
        assertThat(quietCount() - before).as("requests of a capture of 10 that found 6").isEqualTo(1);
        assertThat(five).hasSize(5);
        assertThat(rest).hasSize(6);
        List<Long> tokens = new ArrayList<>();
        warm.forEach(c -> tokens.add(c.token()));
        five.forEach(c -> tokens.add(c.token()));
        rest.forEach(c -> tokens.add(c.token()));
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
        List<String> captured = new ArrayList<>();
        warm.forEach(c -> captured.add(c.taskId()));
        five.forEach(c -> captured.add(c.taskId()));
        rest.forEach(c -> captured.add(c.taskId()));
        assertThat(captured).containsExactlyInAnyOrderElementsOf(ids);
    }
}
