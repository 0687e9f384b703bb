package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

class FencedWritesTest {

    private static ConnectionFactory factory;

    @BeforeAll
    static void createTable() {
        factory = PostgresTestSupport.factory(PostgresTestSupport.shared());
        PostgresTestSupport.exec(factory, "CREATE SCHEMA IF NOT EXISTS fenced;"
                + " DROP TABLE IF EXISTS fenced.accounts;"
                + " CREATE TABLE fenced.accounts (id text PRIMARY KEY, balance bigint, note text, fence bigint);"
                + " INSERT INTO fenced.accounts VALUES ('acc-1', 0, NULL, NULL), ('acc-2', 0, NULL, 100)");
    }

    private static Map<String, Object> row(String id) {
        return PostgresTestSupport.sql(factory, "SELECT balance, note, fence FROM fenced.accounts WHERE id = $1", id).get(0);
    }

    @Test
    void aStaleTokenIsRejectedAndANewerOneAccepted() {
        FencedWrites accounts = FencedWrites.of(factory, "accounts", "id").in("fenced");
        StepVerifier.create(accounts.write("acc-1", "balance", 10L, 5)).expectNext(true).expectComplete().verify(TIMEOUT);
        StepVerifier.create(accounts.write("acc-1", "balance", 20L, 3)).as("stale").expectNext(false).expectComplete().verify(TIMEOUT);
        StepVerifier.create(accounts.write("acc-1", "balance", 30L, 5)).as("equal: a second write under the same lease")
                .expectNext(true).expectComplete().verify(TIMEOUT);
        assertThat(row("acc-1")).containsEntry("balance", 30L).containsEntry("fence", 5L);
        Map<String, Object> both = new LinkedHashMap<>();
        both.put("balance", 40L);
        both.put("note", "it's \"quoted\"; DROP TABLE fenced.accounts; --");
        StepVerifier.create(accounts.write("acc-1", both, 7)).expectNext(true).expectComplete().verify(TIMEOUT);
        assertThat(row("acc-1")).containsEntry("balance", 40L).containsEntry("fence", 7L)
                .containsEntry("note", "it's \"quoted\"; DROP TABLE fenced.accounts; --");
        StepVerifier.create(accounts.write("acc-2", "balance", 1L, 99)).as("below the stored fence")
                .expectNext(false).expectComplete().verify(TIMEOUT);
        StepVerifier.create(accounts.write("no-such-row", "balance", 1L, 1000)).expectNext(false).expectComplete().verify(TIMEOUT);
        StepVerifier.create(accounts.write("acc-1' OR '1'='1", "balance", 1L, 1000)).as("a hostile key is data")
                .expectNext(false).expectComplete().verify(TIMEOUT);
    }

    @Test
    void tokensOfSuccessiveLeasesFenceOutTheEarlierHolder() {
        PostgresTestSupport.exec(factory, "INSERT INTO fenced.accounts VALUES ('acc-3', 0, NULL, NULL) ON CONFLICT DO NOTHING");
        LockStore session = PostgresLocks.connect(PostgresTestSupport.factory(PostgresTestSupport.shared()),
                PostgresLockOptions.builder().schema("fenced").build());
        LockClient locks = session.locks(io.reactivelocks.LockOptions.defaults());
        FencedWrites accounts = FencedWrites.of(factory, "accounts", "id").in("fenced");
        try {
            Lease first = locks.acquire("account:acc-3").block(TIMEOUT);
            first.release().block(TIMEOUT);
            Lease second = locks.acquire("account:acc-3").block(TIMEOUT);
            assertThat(accounts.write("acc-3", "balance", 2L, second.token()).block(TIMEOUT)).isTrue();
            // the first holder wakes up late (a GC pause, say) and writes with its old token
            assertThat(accounts.write("acc-3", "balance", 1L, first.token()).block(TIMEOUT)).isFalse();
            assertThat(row("acc-3")).containsEntry("balance", 2L).containsEntry("fence", second.token());
            second.release().block(TIMEOUT);
        } finally {
            session.close().block(TIMEOUT);
        }
    }

    @Test
    void theStatementQuotesCheckedIdentifiersAndBindsEverythingElse() {
        FencedWrites w = FencedWrites.of(factory, "Accounts", "Id").in("App").fenceColumn("Fence");
        assertThat(w.updateSql(List.of("balance", "Note"))).isEqualTo("UPDATE \"App\".\"Accounts\" SET \"balance\" = $1,"
                + " \"Note\" = $2, \"Fence\" = $3 WHERE \"Id\" = $4 AND (\"Fence\" IS NULL OR \"Fence\" <= $3)");
        assertThatThrownBy(() -> w.write("k", Map.of(), 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("columns");
        assertThatThrownBy(() -> w.write("k", "Fence", 1, 1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence");
        assertThatThrownBy(() -> w.write("k", "balance = 0 --", 1, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("column");
        assertThatThrownBy(() -> w.write(null, "balance", 1, 1)).isInstanceOf(NullPointerException.class).hasMessageContaining("key");
        assertThatThrownBy(() -> w.write("k", "balance", null, 1)).isInstanceOf(NullPointerException.class).hasMessageContaining("value");
    }
}
