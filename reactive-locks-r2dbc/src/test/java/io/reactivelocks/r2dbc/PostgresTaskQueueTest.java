package io.reactivelocks.r2dbc;

import static io.reactivelocks.r2dbc.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/** Task capture against a real PostgreSQL: demand, exclusivity, expiry, retries, release, hostile names, identifiers. */
class PostgresTaskQueueTest {

    private static final String SCHEMA = "task_test";

    private static PostgresServer pg;
    private static PostgresqlConnectionFactory factory;
    private static PostgresLockOptions options;
    private static PostgresLockBackend backend;
    private static PostgresTaskQueue tasks;

    private final List<PostgresLockBackend> extraBackends = new ArrayList<>();

    @BeforeAll
    static void start() {
        pg = PostgresTestSupport.shared();
        factory = PostgresTestSupport.factory(pg);
        options = PostgresLockOptions.builder().schema(SCHEMA).channel("task_test_locks").poolMaxSize(4).build();
        backend = PostgresLockBackend.create(PostgresTestSupport.factory(pg), options);
        tasks = PostgresTaskQueue.create(backend);
        tasks.migrate().block(TIMEOUT);
        tasks.migrate().block(TIMEOUT); // idempotent
    }

    @AfterEach
    void closeExtra() {
        extraBackends.forEach(b -> b.close().block(TIMEOUT));
        extraBackends.clear();
    }

    @AfterAll
    static void cleanUp() {
        try {
            PostgresTestSupport.exec(factory, "DELETE FROM " + SqlIdentifiers.qualified(SCHEMA, "reactive_lock_tasks"));
            assertThat(PostgresTestSupport.count(factory, SCHEMA, "reactive_lock_tasks")).isZero();
        } finally {
            backend.close().block(TIMEOUT);
        }
    }

    /** A queue client over a backend of its own: its own connection factory, pool and listening connection. */
    private PostgresTaskQueue ownQueue(LockOptions lockOptions) {
        PostgresLockBackend b = PostgresLockBackend.create(PostgresTestSupport.factory(pg), options);
        extraBackends.add(b);
        return PostgresTaskQueue.create(b, lockOptions);
    }

    private static String queueName(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    private static List<String> ids(int n) {
        return IntStream.range(0, n).mapToObj(i -> "task-" + i).collect(Collectors.toList());
    }

    private static long countByStatus(String queue, String status) {
        return ((Number) PostgresTestSupport.sql(factory, "SELECT count(*) AS n FROM " + SqlIdentifiers.qualified(SCHEMA,
                "reactive_lock_tasks") + " WHERE queue = $1 AND status = $2", TextEscapes.encode(queue), status)
                .get(0).get("n")).longValue();
    }

    private static Map<String, Object> row(String queue, String taskId) {
        List<Map<String, Object>> rows = PostgresTestSupport.sql(factory, "SELECT * FROM " + SqlIdentifiers.qualified(SCHEMA,
                "reactive_lock_tasks") + " WHERE queue = $1 AND task_id = $2", TextEscapes.encode(queue), TextEscapes.encode(taskId));
        return rows.isEmpty() ? null : rows.get(0);
    }

    /** Captures exactly one task (demand 1), for test threads. */
    private static TaskClaim captureOne(PostgresTaskQueue q, String queue, Duration claimTime) {
        return q.capture(queue, claimTime).take(1).single().block(TIMEOUT);
    }

    /** A subscriber that only requests what the test asks for. */
    private static final class Demand extends BaseSubscriber<TaskClaim> {
        final List<TaskClaim> received = new CopyOnWriteArrayList<>();
        volatile Throwable error;

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            // no demand until the test asks
        }

        @Override
        protected void hookOnNext(TaskClaim claim) {
            received.add(claim);
        }

        @Override
        protected void hookOnError(Throwable throwable) {
            error = throwable;
        }
    }

    // ------------------------------------------------------------------ demand

    @Test
    void aRequestOfThreeCapturesExactlyThreeTasksInProgress() {
        String q = queueName("demand");
        assertThat(tasks.registerAll(q, ids(10), 1).block(TIMEOUT)).isEqualTo(10);
        assertThat(tasks.registerAll(q, ids(10), 1).block(TIMEOUT)).as("registration is idempotent").isZero();
        Demand d = new Demand();
        tasks.capture(q).subscribe(d);
        try {
            assertThat(countByStatus(q, "in_progress")).as("nothing before the first request").isZero();
            d.request(3);
            await().atMost(TIMEOUT).until(() -> d.received.size() == 3);
            // never more than requested: stays at 3, in the stream and in the table
            await().during(Duration.ofMillis(300)).atMost(TIMEOUT)
                    .until(() -> d.received.size() == 3 && countByStatus(q, "in_progress") == 3);
            d.request(2);
            await().atMost(TIMEOUT).until(() -> d.received.size() == 5);
            await().during(Duration.ofMillis(200)).atMost(TIMEOUT)
                    .until(() -> d.received.size() == 5 && countByStatus(q, "in_progress") == 5);
            assertThat(countByStatus(q, "pending")).isEqualTo(5);
            assertThat(d.received).extracting(TaskClaim::taskId).doesNotHaveDuplicates();
            assertThat(d.received).extracting(TaskClaim::token).doesNotHaveDuplicates();
            for (TaskClaim c : d.received) {
                assertThat(c.queue()).isEqualTo(q);
                assertThat(c.attempt()).isEqualTo(1);
                assertThat(c.retriesLeft()).isEqualTo(1);
                assertThat(c.isValid()).isTrue();
                assertThat(c.remaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30));
                Map<String, Object> r = row(q, c.taskId());
                assertThat(r).containsEntry("status", "in_progress").containsEntry("claim_token", c.token())
                        .containsEntry("claim_owner", c.owner());
            }
            assertThat(d.error).isNull();
        } finally {
            d.cancel();
        }
        // delivered claims stay the subscriber's after a cancel
        assertThat(countByStatus(q, "in_progress")).isEqualTo(5);
        for (TaskClaim c : d.received) {
            assertThat(c.release().block(TIMEOUT)).isTrue();
            assertThat(c.isValid()).isFalse();
        }
        assertThat(countByStatus(q, "pending")).isEqualTo(10);
    }

    @Test
    void cancellingWhileACaptureIsInFlightReleasesWhatItCaptured() {
        String q = queueName("cancel");
        tasks.registerAll(q, ids(5), 0).block(TIMEOUT);
        Demand d = new Demand();
        tasks.capture(q).subscribe(d);
        d.request(5); // the statement is sent now ...
        d.cancel();   // ... and its claims, never delivered, are given back when it answers
        await().atMost(TIMEOUT).until(() -> sumAttempts(q) == 5 && countByStatus(q, "pending") == 5);
        assertThat(d.received).isEmpty();
        assertThat(countByStatus(q, "in_progress")).isZero();
    }

    private static long sumAttempts(String queue) {
        Object n = PostgresTestSupport.sql(factory, "SELECT sum(attempts) AS n FROM " + SqlIdentifiers.qualified(SCHEMA,
                "reactive_lock_tasks") + " WHERE queue = $1", TextEscapes.encode(queue)).get(0).get("n");
        return n == null ? 0 : ((Number) n).longValue();
    }

    @Test
    void anIdleCaptureIsWokenByARegistrationRatherThanByItsPolls() {
        String q = queueName("wake");
        // polls every 30 s: only the notification can deliver within the timeout
        PostgresTaskQueue slowPoller = PostgresTaskQueue.create(backend, LockOptions.builder()
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofSeconds(30)).maxBackoff(Duration.ofSeconds(30)).jitter(0))
                .build());
        Demand d = new Demand();
        slowPoller.capture(q).subscribe(d);
        try {
            d.request(1);
            await().atMost(TIMEOUT).until(backend::listening);
            // let the capture find the queue empty and go idle
            await().pollDelay(Duration.ofMillis(300)).atMost(TIMEOUT).until(() -> d.received.isEmpty());
            assertThat(tasks.register(q, "late", 0, "hello").block(TIMEOUT)).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> d.received.size() == 1);
            assertThat(d.received.get(0).taskId()).isEqualTo("late");
            assertThat(d.received.get(0).payload()).isEqualTo("hello");
            assertThat(d.received.get(0).complete().block(TIMEOUT)).isTrue();
        } finally {
            d.cancel();
        }
    }

    // ------------------------------------------------------------------ exclusivity

    @Test
    void eightConcurrentCapturersWithTheirOwnPoolsCompleteEachOfAThousandTasksExactlyOnce() {
        String q = queueName("race");
        List<String> all = ids(1000);
        assertThat(tasks.registerAll(q, all, 0).block(TIMEOUT)).isEqualTo(1000);
        Map<String, AtomicInteger> delivered = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> completed = new ConcurrentHashMap<>();
        Set<Long> tokens = ConcurrentHashMap.newKeySet();
        AtomicInteger duplicateTokens = new AtomicInteger();
        List<Flux<String>> capturers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            PostgresTaskQueue own = ownQueue(LockOptions.defaults());
            capturers.add(own.capture(q)
                    .doOnNext(c -> {
                        delivered.computeIfAbsent(c.taskId(), k -> new AtomicInteger()).incrementAndGet();
                        if (!tokens.add(c.token())) {
                            duplicateTokens.incrementAndGet();
                        }
                    })
                    .flatMap(c -> c.complete().filter(ok -> ok).map(ok -> c.taskId()), 16));
        }
        List<String> done = Flux.merge(capturers)
                .doOnNext(id -> completed.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet())
                .take(1000)
                .collectList()
                .block(Duration.ofSeconds(30));
        assertThat(done).hasSize(1000).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(all);
        assertThat(delivered.keySet()).containsExactlyInAnyOrderElementsOf(all);
        assertThat(delivered.values()).allSatisfy(n -> assertThat(n.get()).as("captures of one task").isEqualTo(1));
        assertThat(completed.values()).allSatisfy(n -> assertThat(n.get()).as("completions of one task").isEqualTo(1));
        assertThat(duplicateTokens).hasValue(0);
        // the table agrees: every task done, each captured exactly once, none left claimed
        assertThat(countByStatus(q, "done")).isEqualTo(1000);
        Map<String, Object> agg = PostgresTestSupport.sql(factory, "SELECT count(*) AS n, min(attempts) AS lo, max(attempts) AS hi,"
                + " count(DISTINCT claim_token) AS tokens FROM " + SqlIdentifiers.qualified(SCHEMA, "reactive_lock_tasks")
                + " WHERE queue = $1", TextEscapes.encode(q)).get(0);
        assertThat(agg).containsEntry("n", 1000L).containsEntry("lo", 1).containsEntry("hi", 1).containsEntry("tokens", 1000L);
    }

    @Test
    void theCaptureStatementIsAnOrderedScanOfTheQueueIndexWithoutASort() {
        // sequential scans off in this session: the plan shows whether the index CAN serve the statement
        List<String> plan = Flux.usingWhen(factory.create(), c -> Flux.from(c.createStatement("SET enable_seqscan = off").execute())
                        .concatMap(r -> r.getRowsUpdated())
                        .thenMany(Flux.defer(() -> Flux.from(c.createStatement("EXPLAIN " + tasks.captureSql)
                                .bind(0, "some queue").bind(1, 10).bind(2, "owner").bind(3, 1_000_000L).execute())))
                        .concatMap(r -> r.map((row, md) -> row.get(0, String.class))),
                c -> c.close()).collectList().block(TIMEOUT);
        String text = String.join("\n", plan);
        assertThat(text).contains("reactive_lock_tasks_ready_idx").contains("LockRows").doesNotContain("Sort")
                .doesNotContain("Seq Scan");
    }

    // ------------------------------------------------------------------ expiry

    @Test
    void anExpiredClaimIsRecapturedByAnotherCapturerWithAGreaterTokenAndTheStaleClaimCannotFinish() {
        String q = queueName("expiry");
        tasks.register(q, "job", 2).block(TIMEOUT);
        PostgresTaskQueue first = ownQueue(LockOptions.defaults());
        PostgresTaskQueue second = ownQueue(LockOptions.defaults());
        TaskClaim stale = captureOne(first, q, Duration.ofMillis(300));
        // the second capturer waits for the claim's expiry (no sweeper: the capture's WHERE clause takes it)
        TaskClaim fresh = second.capture(q).take(1).single().block(TIMEOUT);
        assertThat(fresh.taskId()).isEqualTo("job");
        assertThat(fresh.token()).isGreaterThan(stale.token());
        assertThat(fresh.owner()).isNotEqualTo(stale.owner());
        assertThat(fresh.attempt()).isEqualTo(2);
        assertThat(fresh.retriesLeft()).as("an expiry uses no retry").isEqualTo(2);
        assertThat(stale.isValid()).isFalse();
        StepVerifier.create(stale.renew()).expectNext(false).expectComplete().verify(TIMEOUT);
        StepVerifier.create(stale.complete()).expectNext(false).expectComplete().verify(TIMEOUT);
        StepVerifier.create(stale.fail()).expectNext(false).expectComplete().verify(TIMEOUT);
        StepVerifier.create(stale.release()).expectNext(false).expectComplete().verify(TIMEOUT);
        assertThat(row(q, "job")).containsEntry("status", "in_progress").containsEntry("claim_token", fresh.token());
        StepVerifier.create(fresh.renew()).expectNext(true).expectComplete().verify(TIMEOUT);
        StepVerifier.create(fresh.complete()).expectNext(true).expectComplete().verify(TIMEOUT);
        TaskStatus s = tasks.status(q, "job").block(TIMEOUT);
        assertThat(s.state()).isEqualTo(TaskState.DONE);
        assertThat(s.token()).isEqualTo(fresh.token());
        assertThat(s.attempts()).isEqualTo(2);
        assertThat(s.claimRemaining()).isNull();
    }

    @Test
    void anExpiredClaimNobodyRecapturedMayStillCompleteButNotRenew() {
        String q = queueName("late");
        tasks.register(q, "job", 0).block(TIMEOUT);
        TaskClaim c = captureOne(tasks, q, Duration.ofMillis(100));
        await().atMost(TIMEOUT).until(() -> tasks.status(q, "job").block(TIMEOUT).state() == TaskState.PENDING);
        StepVerifier.create(c.renew()).expectNext(false).expectComplete().verify(TIMEOUT);
        StepVerifier.create(c.complete()).expectNext(true).expectComplete().verify(TIMEOUT);
        assertThat(tasks.status(q, "job").block(TIMEOUT).state()).isEqualTo(TaskState.DONE);
    }

    // ------------------------------------------------------------------ fail, release

    @Test
    void failureUsesARetryAndAnExhaustedTaskIsDeadAndStaysVisible() {
        String q = queueName("fail");
        tasks.register(q, "flaky", 1, "p").block(TIMEOUT);
        TaskClaim c1 = captureOne(tasks, q, Duration.ofSeconds(30));
        assertThat(c1.retriesLeft()).isEqualTo(1);
        StepVerifier.create(c1.fail()).expectNext(true).expectComplete().verify(TIMEOUT);
        StepVerifier.create(c1.fail()).as("once").expectNext(false).expectComplete().verify(TIMEOUT);
        TaskStatus s1 = tasks.status(q, "flaky").block(TIMEOUT);
        assertThat(s1.state()).isEqualTo(TaskState.FAILED);
        assertThat(s1.retriesLeft()).isZero();
        assertThat(row(q, "flaky")).containsEntry("status", "failed").containsEntry("retries_left", 0);

        TaskClaim c2 = captureOne(tasks, q, Duration.ofSeconds(30)); // failed tasks are capturable again
        assertThat(c2.token()).isGreaterThan(c1.token());
        assertThat(c2.attempt()).isEqualTo(2);
        assertThat(c2.retriesLeft()).isZero();
        assertThat(c2.payload()).isEqualTo("p");
        StepVerifier.create(c2.fail()).expectNext(true).expectComplete().verify(TIMEOUT);
        TaskStatus s2 = tasks.status(q, "flaky").block(TIMEOUT);
        assertThat(s2.state()).isEqualTo(TaskState.DEAD);
        assertThat(s2.attempts()).isEqualTo(2);
        assertThat(s2.token()).isEqualTo(c2.token());
        assertThat(s2.payload()).isEqualTo("p");
        assertThat(row(q, "flaky")).containsEntry("status", "dead");

        // dead is never captured again
        StepVerifier.create(tasks.capture(q), 1).expectSubscription().expectNoEvent(Duration.ofMillis(300))
                .thenCancel().verify(TIMEOUT);
        assertThat(tasks.status(q, "flaky").block(TIMEOUT).state()).isEqualTo(TaskState.DEAD);
        StepVerifier.create(tasks.remove(q, "flaky")).expectNext(true).expectComplete().verify(TIMEOUT);
        StepVerifier.create(tasks.status(q, "flaky")).expectComplete().verify(TIMEOUT);
        StepVerifier.create(tasks.remove(q, "flaky")).expectNext(false).expectComplete().verify(TIMEOUT);
    }

    @Test
    void releaseMakesTheTaskPendingWithoutUsingARetry() {
        String q = queueName("release");
        tasks.register(q, "job", 2).block(TIMEOUT);
        TaskClaim c1 = captureOne(tasks, q, Duration.ofSeconds(30));
        StepVerifier.create(c1.release()).expectNext(true).expectComplete().verify(TIMEOUT);
        TaskStatus s = tasks.status(q, "job").block(TIMEOUT);
        assertThat(s.state()).isEqualTo(TaskState.PENDING);
        assertThat(s.retriesLeft()).isEqualTo(2);
        assertThat(row(q, "job")).containsEntry("status", "pending").containsEntry("retries_left", 2)
                .containsEntry("claim_expires_at", null);
        StepVerifier.create(c1.complete()).as("released: no longer ours").expectNext(false).expectComplete().verify(TIMEOUT);
        TaskClaim c2 = captureOne(tasks, q, Duration.ofSeconds(30));
        assertThat(c2.token()).isGreaterThan(c1.token());
        assertThat(c2.attempt()).isEqualTo(2);
        assertThat(c2.retriesLeft()).isEqualTo(2);
        StepVerifier.create(c2.complete()).expectNext(true).expectComplete().verify(TIMEOUT);
        StepVerifier.create(tasks.register(q, "job", 5)).as("a done task is not reset").expectNext(false)
                .expectComplete().verify(TIMEOUT);
        assertThat(tasks.status(q, "job").block(TIMEOUT).state()).isEqualTo(TaskState.DONE);
    }

    // ------------------------------------------------------------------ process / hold

    @Test
    void processRenewsWhileTheWorkRunsThenCompletesOrRecordsTheFailure() {
        String q = queueName("process");
        PostgresTaskQueue shortClaims = PostgresTaskQueue.create(backend,
                LockOptions.builder().leaseTime(Duration.ofMillis(400)).build());
        shortClaims.register(q, "slow", 1).block(TIMEOUT);
        shortClaims.register(q, "broken", 1).block(TIMEOUT);
        List<TaskClaim> claims = shortClaims.capture(q).take(2).collectList().block(TIMEOUT);
        // a rival capturer waits the whole time: renewals must keep both tasks from it
        Demand rival = new Demand();
        ownQueue(LockOptions.defaults()).capture(q).subscribe(rival);
        rival.request(2);
        try {
            Map<String, TaskClaim> byId = new HashMap<>();
            claims.forEach(c -> byId.put(c.taskId(), c));
            // both run at once, each renewed by its own hold: 1.2 s and 0.5 s of work on claims of 0.4 s
            Mono<Object> slow = byId.get("slow").process(c -> Mono.delay(Duration.ofMillis(1200)).thenReturn("ok:" + c.token()));
            Mono<Object> broken = byId.get("broken").process(c -> Mono.delay(Duration.ofMillis(500))
                    .then(Mono.error(new IllegalStateException("boom"))));
            List<Object> results = Flux.merge(slow, broken.onErrorResume(Mono::just)).collectList().block(TIMEOUT);
            assertThat(results).hasSize(2).contains("ok:" + byId.get("slow").token());
            assertThat(results).filteredOn(r -> r instanceof IllegalStateException).singleElement()
                    .extracting(r -> ((Throwable) r).getMessage()).isEqualTo("boom");
            TaskStatus s = shortClaims.status(q, "slow").block(TIMEOUT);
            assertThat(s.state()).isEqualTo(TaskState.DONE);
            assertThat(s.attempts()).as("never recaptured while renewed").isEqualTo(1);

            TaskStatus b = shortClaims.status(q, "broken").block(TIMEOUT);
            assertThat(b.state()).isIn(TaskState.FAILED, TaskState.IN_PROGRESS); // the rival may take the failed task at once
            assertThat(b.retriesLeft()).isZero();
            // the failed task is capturable again at once (a wake-up), the completed one never
            await().atMost(TIMEOUT).until(() -> rival.received.size() == 1);
            TaskClaim retry = rival.received.get(0);
            assertThat(retry.taskId()).isEqualTo("broken");
            assertThat(retry.attempt()).isEqualTo(2);
            assertThat(retry.token()).isGreaterThan(byId.get("broken").token());
            assertThat(retry.release().block(TIMEOUT)).isTrue();
        } finally {
            rival.cancel();
        }
    }

    @Test
    void processEndsWithLockLostAndCancelsTheWorkWhenTheClaimIsTakenOver() {
        String q = queueName("lost");
        PostgresTaskQueue shortClaims = PostgresTaskQueue.create(backend,
                LockOptions.builder().leaseTime(Duration.ofMillis(600)).build());
        shortClaims.register(q, "job", 3).block(TIMEOUT);
        TaskClaim c = captureOne(shortClaims, q, Duration.ofMillis(600));
        AtomicBoolean workCancelled = new AtomicBoolean();
        Mono<Object> run = c.process(claim -> Mono.never().doOnCancel(() -> workCancelled.set(true)));
        // the claim is taken over behind the worker's back: its first renewal finds another token
        PostgresTestSupport.sql(factory, "UPDATE " + SqlIdentifiers.qualified(SCHEMA, "reactive_lock_tasks")
                + " SET claim_token = nextval('" + SqlIdentifiers.qualified(SCHEMA, "reactive_locks_token_seq")
                + "') WHERE queue = $1 AND task_id = $2 RETURNING claim_token", TextEscapes.encode(q), "job");
        StepVerifier.create(run)
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockLostException.class)
                        .hasMessageContaining("job").extracting(x -> ((LockLostException) x).token()).isEqualTo(c.token()))
                .verify(TIMEOUT);
        assertThat(workCancelled).isTrue();
        assertThat(tasks.status(q, "job").block(TIMEOUT).retriesLeft()).as("a lost claim records no failure").isEqualTo(3);
    }

    @Test
    void holdEmitsAfterEachRenewalAndCompletesWhenTheClaimEnds() {
        String q = queueName("hold");
        PostgresTaskQueue shortClaims = PostgresTaskQueue.create(backend,
                LockOptions.builder().leaseTime(Duration.ofMillis(300)).build());
        shortClaims.register(q, "job", 0).block(TIMEOUT);
        TaskClaim c = captureOne(shortClaims, q, Duration.ofMillis(300));
        long firstDeadline = c.validUntilNanos();
        StepVerifier.create(c.hold())
                .expectNext(c)
                .expectNext(c)
                .then(() -> assertThat(c.validUntilNanos()).isGreaterThan(firstDeadline))
                .then(() -> c.complete().subscribe())
                .thenConsumeWhile(x -> true)
                .expectComplete()
                .verify(TIMEOUT);
        assertThat(c.isValid()).isFalse();
        assertThat(tasks.status(q, "job").block(TIMEOUT).state()).isEqualTo(TaskState.DONE);
    }

    // ------------------------------------------------------------------ names and identifiers

    @Test
    void hostileQueueNamesTaskIdsAndPayloadsAreData() {
        String q = "q'\"; DROP TABLE " + SCHEMA + ".reactive_lock_tasks; --\u0000\\0\uD800🔒" + UUID.randomUUID();
        List<String> hostile = List.of(
                "it's \"quoted\"; DROP TABLE x; --",
                "nul\u0000in\u0000id",
                "\u0000",
                "back\\slash\\0\\u0041\\",
                "lone \uD800 high, lone \uDC00 low",
                "ünï 🔒 \u202E rtl %_*?",
                "x".repeat(1024),
                "é".repeat(512),
                "🔒".repeat(256));
        Map<String, String> payloads = new LinkedHashMap<>();
        for (String id : hostile) {
            assertThat(io.reactivelocks.spi.LockNames.utf8Length(id)).isLessThanOrEqualTo(1024);
            payloads.put(id, "payload of " + id + " \u0000'\\");
            assertThat(tasks.register(q, id, 1, payloads.get(id)).block(TIMEOUT)).isTrue();
        }
        assertThat(tasks.register(q, "nul\u0000in\u0000id", 1).block(TIMEOUT)).isFalse();
        // stored forms: distinct rows, escaped only where PostgreSQL text cannot hold the character
        List<Map<String, Object>> rows = PostgresTestSupport.sql(factory, "SELECT task_id FROM "
                + SqlIdentifiers.qualified(SCHEMA, "reactive_lock_tasks") + " WHERE queue = $1", TextEscapes.encode(q));
        assertThat(rows).extracting(r -> (String) r.get("task_id"))
                .containsExactlyInAnyOrderElementsOf(hostile.stream().map(TextEscapes::encode).toList());

        List<TaskClaim> claims = tasks.capture(q).take(hostile.size()).collectList().block(TIMEOUT);
        assertThat(claims).extracting(TaskClaim::taskId).containsExactlyInAnyOrderElementsOf(hostile);
        for (TaskClaim c : claims) {
            assertThat(c.queue()).isEqualTo(q);
            assertThat(c.payload()).isEqualTo(payloads.get(c.taskId()));
            assertThat(c.complete().block(TIMEOUT)).isTrue();
            TaskStatus s = tasks.status(q, c.taskId()).block(TIMEOUT);
            assertThat(s.taskId()).isEqualTo(c.taskId());
            assertThat(s.state()).isEqualTo(TaskState.DONE);
            assertThat(s.payload()).isEqualTo(payloads.get(c.taskId()));
        }
        StepVerifier.create(tasks.status(q, "nul")).as("a prefix is another id").expectComplete().verify(TIMEOUT);
        assertThat(PostgresTestSupport.count(factory, SCHEMA, "reactive_lock_tasks")).isPositive(); // the table survived

        // the longest names: a 1024-byte queue with a 1024-byte task id
        String longQueue = "ü".repeat(511) + "qq";
        String longId = "🔒".repeat(255) + "abcd";
        assertThat(io.reactivelocks.spi.LockNames.utf8Length(longQueue)).isEqualTo(1024);
        assertThat(io.reactivelocks.spi.LockNames.utf8Length(longId)).isEqualTo(1024);
        tasks.register(longQueue, longId, 0).block(TIMEOUT);
        TaskClaim c = captureOne(tasks, longQueue, Duration.ofSeconds(30));
        assertThat(c.taskId()).isEqualTo(longId);
        assertThat(c.complete().block(TIMEOUT)).isTrue();
    }

    @Test
    void badArgumentsAreRejectedAtCallTimeNamingTheArgument() {
        assertThatThrownBy(() -> tasks.register(null, "t", 0)).isInstanceOf(NullPointerException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.register("q", null, 0)).isInstanceOf(NullPointerException.class).hasMessageContaining("taskId");
        assertThatThrownBy(() -> tasks.register("", "t", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.register("q", "x".repeat(1025), 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("taskId").hasMessageContaining("1024");
        assertThatThrownBy(() -> tasks.register("q", "t", -1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retries");
        // escaping may double a name: two such names together would not fit a primary-key entry
        String lone = "\uD800".repeat(341);
        assertThatThrownBy(() -> tasks.register(lone, lone, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("together");
        assertThatThrownBy(() -> tasks.registerAll("q", List.of("a", ""), 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("taskId");
        assertThatThrownBy(() -> tasks.capture("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.capture("q", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("claimTime");
        assertThatThrownBy(() -> tasks.capture("q", Duration.ofMillis(2))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("drift");
        assertThatThrownBy(() -> tasks.status("q", "")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("taskId");
        assertThatThrownBy(() -> PostgresTaskQueue.create(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("backend");
    }

    @Test
    void identifiersAreValidatedQuotedAndWorkEndToEnd() {
        for (String bad : new String[] {"t; DROP TABLE x", "t\"", "1t", "", "t-t", "x".repeat(64), "t\u0000"}) {
            assertThatThrownBy(() -> PostgresLockOptions.builder().taskTable(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("taskTable");
        }
        assertThatThrownBy(() -> PostgresLockOptions.builder().taskTable(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("taskTable");
        assertThatThrownBy(() -> PostgresLockOptions.builder().taskTable("reactive_locks").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("taskTable");

        PostgresLockOptions odd = PostgresLockOptions.builder().schema("TaskS").taskTable("Select").sequence("Seq")
                .channel("task_test_odd").poolMaxSize(2).build();
        PostgresLockBackend b = PostgresLockBackend.create(PostgresTestSupport.factory(pg), odd);
        extraBackends.add(b);
        PostgresTaskQueue q = PostgresTaskQueue.create(b);
        for (String sql : List.of(q.schemaSql, q.schemaCheckSql, q.registerSql, q.captureSql, q.renewSql, q.completeSql,
                q.failSql, q.releaseSql, q.statusSql, q.removeSql)) {
            assertThat(sql).doesNotContain("${");
        }
        assertThat(q.captureSql).contains("FROM \"TaskS\".\"Select\" t").contains("nextval('\"TaskS\".\"Seq\"')")
                .contains("FOR UPDATE SKIP LOCKED").doesNotContain("--");
        assertThat(q.schemaSql).contains("CREATE TABLE IF NOT EXISTS \"TaskS\".\"Select\"").contains("nspname = 'TaskS'");
        // created on first use (no migrate), with the reserved word and the upper case kept
        String queue = queueName("odd");
        assertThat(q.register(queue, "t", 0).block(TIMEOUT)).isTrue();
        TaskClaim c = captureOne(q, queue, Duration.ofSeconds(30));
        assertThat(c.complete().block(TIMEOUT)).isTrue();
        assertThat(PostgresTestSupport.count(factory, "TaskS", "Select")).isEqualTo(1);
        PostgresTestSupport.exec(factory, "DROP SCHEMA \"TaskS\" CASCADE");
    }

    @Test
    void claimTimeIsTheServersAndTheLocalDeadlineIsConservative() {
        String q = queueName("time");
        tasks.register(q, "job", 0).block(TIMEOUT);
        long before = System.nanoTime();
        TaskClaim c = captureOne(tasks, q, Duration.ofSeconds(10));
        long now = System.nanoTime();
        // send time + 10 s − (1% + 2 ms): never later than now + 10 s − 102 ms
        assertThat(c.validUntilNanos()).isLessThanOrEqualTo(now + Duration.ofSeconds(10).minusMillis(102).toNanos());
        assertThat(c.validUntilNanos()).isGreaterThan(before);
        assertThat(c.claimTime()).isEqualTo(Duration.ofSeconds(10));
        TaskStatus s = tasks.status(q, "job").block(TIMEOUT);
        assertThat(s.state()).isEqualTo(TaskState.IN_PROGRESS);
        assertThat(s.claimRemaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(10));
        assertThat(s.owner()).isEqualTo(c.owner());
        assertThat(c.release().block(TIMEOUT)).isTrue();
    }
}
