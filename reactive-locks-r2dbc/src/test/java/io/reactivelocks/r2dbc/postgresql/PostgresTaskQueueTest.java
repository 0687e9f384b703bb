package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * What is specific to the PostgreSQL task queue: the table and its rows, the capture statement's
 * plan, identifiers, {@code migrate()}, the stored-key limit and a takeover behind the worker's back.
 * The behaviour every store shares is {@link PostgresTaskQueueContractTest}.
 */
class PostgresTaskQueueTest {

    private static final String SCHEMA = "task_test";

    private static PostgresServer pg;
    private static PostgresqlConnectionFactory factory;
    private static PostgresLockOptions options;
    private static PostgresLockBackend backend;
    private static PostgresLockStore session;
    private static PostgresTaskQueue tasks;

    @BeforeAll
    static void start() {
        pg = PostgresTestSupport.shared();
        factory = PostgresTestSupport.factory(pg);
        options = PostgresLockOptions.builder().schema(SCHEMA).channel("task_test_locks").poolMaxSize(4).build();
        backend = PostgresLockBackend.create(PostgresTestSupport.factory(pg), options);
        session = PostgresLocks.connect(backend);
        tasks = session.taskQueue(LockOptions.defaults());
        tasks.migrate().block(TIMEOUT);
        tasks.migrate().block(TIMEOUT); // idempotent
    }

    @AfterAll
    static void cleanUp() {
        try {
            PostgresTestSupport.exec(factory, "DELETE FROM " + SqlIdentifiers.qualified(SCHEMA, "reactive_lock_tasks"));
            assertThat(PostgresTestSupport.count(factory, SCHEMA, "reactive_lock_tasks")).isZero();
        } finally {
            tasks.close().block(TIMEOUT);
            session.close().block(TIMEOUT); // and the backend
        }
    }

    private static String queueName(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    private static Map<String, Object> row(String queue, String taskId) {
        List<Map<String, Object>> rows = PostgresTestSupport.sql(factory, "SELECT * FROM " + SqlIdentifiers.qualified(SCHEMA,
                "reactive_lock_tasks") + " WHERE queue = $1 AND task_id = $2", TextEscapes.encode(queue), TextEscapes.encode(taskId));
        return rows.isEmpty() ? null : rows.get(0);
    }

    private static PostgresTaskStore store(PostgresTaskQueue q) {
        return ((DefaultPostgresTaskQueue) q).store();
    }

    @Test
    void theRowCarriesTheClaimAndTheStoredFormsOfHostileNames() {
        String q = "q'\"; DROP TABLE x; --\u0000\\" + UUID.randomUUID();
        String id = "nul\u0000in\\id \uD800";
        assertThat(tasks.register(q, id, 2, "p\u0000").block(TIMEOUT)).isTrue();
        assertThat(row(q, id)).containsEntry("status", "pending").containsEntry("retries_left", 2)
                .containsEntry("payload", TextEscapes.encode("p\u0000"));
        TaskClaim c = tasks.tryCapture(q, 1).blockFirst(TIMEOUT);
        assertThat(row(q, id)).containsEntry("status", "in_progress").containsEntry("claim_token", c.token())
                .containsEntry("claim_owner", c.owner()).containsEntry("attempts", 1);
        assertThat(tasks.fail(c).block(TIMEOUT)).isTrue();
        assertThat(row(q, id)).containsEntry("status", "failed").containsEntry("retries_left", 1)
                .containsEntry("claim_expires_at", null);
        assertThat(PostgresTestSupport.sql(factory, "SELECT task_id FROM " + SqlIdentifiers.qualified(SCHEMA,
                "reactive_lock_tasks") + " WHERE queue = $1", TextEscapes.encode(q)))
                .extracting(r -> r.get("task_id")).containsExactly(TextEscapes.encode(id));
        assertThat(tasks.remove(q, id).block(TIMEOUT)).isTrue();
    }

    @Test
    void claimTimeIsTheServersAndTheLocalDeadlineIsConservative() {
        String q = queueName("time");
        PostgresTaskQueue tenSeconds = session.taskQueue(LockOptions.builder().leaseTime(Duration.ofSeconds(10)).build());
        tenSeconds.register(q, "job", 0).block(TIMEOUT);
        long before = System.nanoTime();
        TaskClaim c = tenSeconds.tryCapture(q, 1).blockFirst(TIMEOUT);
        long now = System.nanoTime();
        // send time + 10 s − (1% + 2 ms): never later than now + 10 s − 102 ms
        assertThat(c.validUntilNanos()).isLessThanOrEqualTo(now + Duration.ofSeconds(10).minusMillis(102).toNanos());
        assertThat(c.validUntilNanos()).isGreaterThan(before);
        assertThat(c.claimTime()).isEqualTo(Duration.ofSeconds(10));
        Map<String, Object> r = PostgresTestSupport.sql(factory, "SELECT extract(epoch FROM claim_expires_at - now()) AS s FROM "
                + SqlIdentifiers.qualified(SCHEMA, "reactive_lock_tasks") + " WHERE queue = $1", TextEscapes.encode(q)).get(0);
        assertThat(((Number) r.get("s")).doubleValue()).isBetween(5.0, 10.0);
        assertThat(tenSeconds.remove(q, "job").block(TIMEOUT)).isTrue();
    }

    @Test
    void processEndsWithLockLostAndCancelsTheWorkWhenTheClaimIsTakenOverBehindItsBack() {
        String q = queueName("lost");
        PostgresTaskQueue shortClaims = session.taskQueue(
                LockOptions.builder().leaseTime(Duration.ofMillis(600)).build());
        shortClaims.register(q, "job", 3).block(TIMEOUT);
        TaskClaim c = shortClaims.tryCapture(q, 1).blockFirst(TIMEOUT);
        AtomicBoolean workCancelled = new AtomicBoolean();
        Mono<Object> run = shortClaims.process(c, claim -> Mono.never().doOnCancel(() -> workCancelled.set(true)));
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
        assertThat(tasks.remove(q, "job").block(TIMEOUT)).isTrue();
    }

    @Test
    void theCaptureStatementIsAnOrderedScanOfTheQueueIndexWithoutASort() {
        // sequential scans off in this session: the plan shows whether the index CAN serve the statement
        List<String> plan = Flux.usingWhen(factory.create(), c -> Flux.from(c.createStatement("SET enable_seqscan = off").execute())
                        .concatMap(r -> r.getRowsUpdated())
                        .thenMany(Flux.defer(() -> Flux.from(c.createStatement("EXPLAIN " + store(tasks).captureSql)
                                .bind(0, "some queue").bind(1, 10).bind(2, "owner").bind(3, 1_000_000L).execute())))
                        .concatMap(r -> r.map((row, md) -> row.get(0, String.class))),
                c -> c.close()).collectList().block(TIMEOUT);
        String text = String.join("\n", plan);
        assertThat(text).contains("reactive_lock_tasks_ready_idx").contains("LockRows").doesNotContain("Sort")
                .doesNotContain("Seq Scan");
    }

    @Test
    void aQueueNameAndTaskIdThatCannotFitAPrimaryKeyEntryTogetherAreRejectedAtCallTime() {
        // escaping may double a name: two such names together would not fit a primary-key entry
        String lone = "\uD800".repeat(341);
        assertThatThrownBy(() -> tasks.register(lone, lone, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("together");
        assertThatThrownBy(() -> tasks.status(lone, lone)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("together");
        assertThatThrownBy(() -> PostgresLocks.connect((PostgresLockBackend) null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("backend");
        assertThatThrownBy(() -> session.taskQueue(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("options");
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
        PostgresLockStore oddSession = PostgresLocks.connect(PostgresTestSupport.factory(pg), odd);
        PostgresTaskQueue q = oddSession.taskQueue(LockOptions.defaults());
        try {
            PostgresTaskStore s = store(q);
            for (String sql : List.of(s.schemaSql, s.schemaCheckSql, s.registerSql, s.captureSql, s.renewSql, s.completeSql,
                    s.failSql, s.releaseSql, s.statusSql, s.removeSql)) {
                assertThat(sql).doesNotContain("${");
            }
            assertThat(s.captureSql).contains("FROM \"TaskS\".\"Select\" t").contains("nextval('\"TaskS\".\"Seq\"')")
                    .contains("FOR UPDATE SKIP LOCKED").doesNotContain("--");
            assertThat(s.schemaSql).contains("CREATE TABLE IF NOT EXISTS \"TaskS\".\"Select\"").contains("nspname = 'TaskS'");
            // created on first use (no migrate), with the reserved word and the upper case kept
            String queue = queueName("odd");
            assertThat(q.register(queue, "t", 0).block(TIMEOUT)).isTrue();
            TaskClaim c = q.tryCapture(queue, 1).blockFirst(TIMEOUT);
            assertThat(q.renew(c).block(TIMEOUT)).isNotNull();
            assertThat(q.complete(c).block(TIMEOUT)).isTrue();
            assertThat(PostgresTestSupport.count(factory, "TaskS", "Select")).isEqualTo(1);
        } finally {
            oddSession.close().block(TIMEOUT);
            PostgresTestSupport.exec(factory, "DROP SCHEMA \"TaskS\" CASCADE");
        }
    }
}
