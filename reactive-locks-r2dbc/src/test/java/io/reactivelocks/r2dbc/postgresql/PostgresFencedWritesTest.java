package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.StaleTokenException;
import io.reactivelocks.r2dbc.FencedWrites;
import io.reactivelocks.r2dbc.MissingRowException;
import io.reactivelocks.r2dbc.SpringFencedWrites;
import io.reactivelocks.r2dbc.SqlDialect;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** {@link FencedWrites} on PostgreSQL rows, with plain R2DBC and with Spring's {@code DatabaseClient}. */
class PostgresFencedWritesTest {

    private static ConnectionFactory factory;
    private static LockStore session;

    @BeforeAll
    static void createTable() {
        factory = PostgresTestSupport.factory(PostgresTestSupport.shared());
        PostgresTestSupport.exec(factory, "CREATE SCHEMA IF NOT EXISTS fenced;"
                + " DROP TABLE IF EXISTS fenced.accounts;"
                + " CREATE TABLE fenced.accounts (id text PRIMARY KEY, balance bigint, note text, fence bigint);"
                + " DROP TABLE IF EXISTS fenced.audit;"
                + " CREATE TABLE fenced.audit (id text PRIMARY KEY);"
                + " INSERT INTO fenced.accounts VALUES ('acc-1', 0, NULL, NULL), ('acc-2', 0, NULL, 100),"
                + " ('acc-3', 0, NULL, NULL), ('acc-4', 0, NULL, NULL), ('acc-5', 0, NULL, NULL), ('acc-6', 0, NULL, 10)");
        session = PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()),
                PostgresLockOptions.builder().schema("fenced").build());
    }

    @AfterAll
    static void close() {
        session.close().block(TIMEOUT);
    }

    private static Map<String, Object> row(String id) {
        return PostgresTestSupport.sql(factory, "SELECT balance, note, fence FROM fenced.accounts WHERE id = $1", id).get(0);
    }

    private static FencedWrites accounts() {
        return FencedWrites.of(factory, "accounts", "id").in("fenced");
    }

    @Test
    void aLowerTokenIsRefusedWithTheRowsFenceAndChangesNothing() {
        FencedWrites accounts = accounts();
        assertThat(accounts.dialect()).isEqualTo(SqlDialect.POSTGRESQL);
        StepVerifier.create(accounts.write("acc-1", "balance", 10L, 5)).expectComplete().verify(TIMEOUT);
        StepVerifier.create(accounts.write("acc-1", "balance", 20L, 3)).as("stale")
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class, s -> {
                    assertThat(s.token()).isEqualTo(3);
                    assertThat(s.fence()).hasValue(5);
                    assertThat(s.resource()).isEqualTo("fenced.accounts[id=acc-1]");
                }))
                .verify(TIMEOUT);
        assertThat(row("acc-1")).containsEntry("balance", 10L).containsEntry("fence", 5L);
        StepVerifier.create(accounts.write("acc-1", "balance", 30L, 5)).as("equal: a second write under the same lease")
                .expectComplete().verify(TIMEOUT);
        assertThat(row("acc-1")).containsEntry("balance", 30L).containsEntry("fence", 5L);
        Map<String, Object> both = new LinkedHashMap<>();
        both.put("balance", 40L);
        both.put("note", "it's \"quoted\"; DROP TABLE fenced.accounts; --");
        StepVerifier.create(accounts.write("acc-1", both, 7)).expectComplete().verify(TIMEOUT);
        assertThat(row("acc-1")).containsEntry("balance", 40L).containsEntry("fence", 7L)
                .containsEntry("note", "it's \"quoted\"; DROP TABLE fenced.accounts; --");
        StepVerifier.create(accounts.write("acc-2", "balance", 1L, 99)).as("below the stored fence")
                .expectErrorSatisfies(e -> assertThat(((StaleTokenException) e).fence()).hasValue(100))
                .verify(TIMEOUT);
        assertThat(row("acc-2")).containsEntry("balance", 0L).containsEntry("fence", 100L);
        StepVerifier.create(accounts.write("no-such-row", "balance", 1L, 1000)).as("missing: not a refusal")
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(MissingRowException.class, m -> {
                    assertThat(m.table()).isEqualTo("fenced.accounts");
                    assertThat(m.key()).isEqualTo("no-such-row");
                }))
                .verify(TIMEOUT);
        StepVerifier.create(accounts.write("acc-1' OR '1'='1", "balance", 1L, 1000)).as("a hostile key is data")
                .expectError(MissingRowException.class).verify(TIMEOUT);
    }

    @Test
    void aPausedHoldersLateWriteIsRefused() {
        LockClient locks = session.locks(LockOptions.defaults());
        FencedWrites accounts = accounts();
        String name = "account:acc-3";
        Lease a = locks.acquire(name).block(TIMEOUT);
        // A pauses (a GC pause, say) past its lease: the operator takes the lock away, A does not notice in time
        session.admin().forceRelease(name).block(TIMEOUT);
        Lease b = locks.acquire(name).block(TIMEOUT);
        assertThat(b.token()).isGreaterThan(a.token());
        StepVerifier.create(accounts.write("acc-3", "balance", 2L, b.token())).expectComplete().verify(TIMEOUT);
        // A wakes up and writes with its old token
        StepVerifier.create(accounts.write("acc-3", "balance", 1L, a.token()))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class, s -> {
                    assertThat(s.token()).isEqualTo(a.token());
                    assertThat(s.fence()).hasValue(b.token());
                }))
                .verify(TIMEOUT);
        assertThat(row("acc-3")).containsEntry("balance", 2L).containsEntry("fence", b.token());
        StepVerifier.create(accounts.write("acc-3", "balance", 3L, b.token())).as("B again, same token")
                .expectComplete().verify(TIMEOUT);
        b.release().block(TIMEOUT);
        Lease c = locks.acquire(name).block(TIMEOUT);
        StepVerifier.create(accounts.write("acc-3", "balance", 4L, c.token())).as("a fresh, higher token")
                .expectComplete().verify(TIMEOUT);
        assertThat(row("acc-3")).containsEntry("balance", 4L).containsEntry("fence", c.token());
        c.release().block(TIMEOUT);
    }

    @Test
    void concurrentWritersWithMixedTokensEndWithTheHighest() {
        FencedWrites accounts = accounts();
        List<Long> tokens = new ArrayList<>();
        for (long t = 1; t <= 12; t++) {
            tokens.add(t);
            tokens.add(t);      // two writers per token: the same grant twice
        }
        Collections.shuffle(tokens);
        AtomicInteger refused = new AtomicInteger();
        Flux.fromIterable(tokens)
                .flatMap(t -> accounts.write("acc-4", "balance", t, t)
                        .onErrorResume(StaleTokenException.class, e -> {
                            assertThat(e.fence().getAsLong()).isGreaterThan(t);
                            refused.incrementAndGet();
                            return Mono.empty();
                        }), tokens.size())
                .then()
                .block(TIMEOUT);
        assertThat(row("acc-4")).containsEntry("balance", 12L).containsEntry("fence", 12L);
        assertThat(refused.get()).isLessThan(tokens.size());
    }

    @Test
    void aWriteOvertakenWhileItWaitsForTheRowReportsTheFenceThatRefusedIt() throws Exception {
        Connection newer = Mono.from(factory.create()).block(TIMEOUT);
        try {
            Mono.from(newer.beginTransaction()).block(TIMEOUT);
            Flux.from(newer.createStatement("UPDATE fenced.accounts SET balance = 20, fence = 20 WHERE id = 'acc-6'").execute())
                    .flatMap(r -> r.getRowsUpdated()).blockLast(TIMEOUT);
            // token 15 passes the fence its statement sees (10), then waits for the row the newer writer holds
            CompletableFuture<Void> late = accounts().write("acc-6", "balance", 15L, 15).toFuture();
            await().atMost(TIMEOUT).until(() -> !PostgresTestSupport.sql(factory, "SELECT pid FROM pg_stat_activity"
                    + " WHERE wait_event_type = 'Lock' AND query LIKE 'WITH \"fenced write\"%'").isEmpty());
            Mono.from(newer.commitTransaction()).block(TIMEOUT);
            assertThatThrownBy(() -> late.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).cause()
                    .isInstanceOfSatisfying(StaleTokenException.class, s -> assertThat(s.fence()).hasValue(20));
        } finally {
            Mono.from(newer.close()).block(TIMEOUT);
        }
        assertThat(row("acc-6")).containsEntry("balance", 20L).containsEntry("fence", 20L);
    }

    @Test
    void springsDatabaseClientWritesInsideTheCallersTransaction() {
        DatabaseClient client = DatabaseClient.create(factory);
        FencedWrites accounts = SpringFencedWrites.of(client, "accounts", "id").in("fenced");
        TransactionalOperator tx = TransactionalOperator.create(new R2dbcTransactionManager(factory));
        Mono<Void> audit = client.sql("INSERT INTO fenced.audit VALUES (:id)").bind("id", "t-10").then();
        StepVerifier.create(audit.then(accounts.write("acc-5", "balance", 10L, 10)).as(tx::transactional))
                .expectComplete().verify(TIMEOUT);
        Mono<Void> stale = client.sql("INSERT INTO fenced.audit VALUES (:id)").bind("id", "t-9").then()
                .then(accounts.write("acc-5", "balance", 9L, 9));
        StepVerifier.create(stale.as(tx::transactional)).expectError(StaleTokenException.class).verify(TIMEOUT);
        assertThat(PostgresTestSupport.sql(factory, "SELECT id FROM fenced.audit ORDER BY id"))
                .as("the refused write rolled its transaction back").extracting(r -> r.get("id")).containsExactly("t-10");
        assertThat(row("acc-5")).containsEntry("balance", 10L).containsEntry("fence", 10L);
        StepVerifier.create(accounts.write("acc-5", "balance", 11L, 10)).as("outside a transaction, the same token")
                .expectComplete().verify(Duration.ofSeconds(10));
        StepVerifier.create(accounts.write("acc-0", "balance", 11L, 10)).expectError(MissingRowException.class)
                .verify(TIMEOUT);
        assertThat(row("acc-5")).containsEntry("balance", 11L);
    }
}
