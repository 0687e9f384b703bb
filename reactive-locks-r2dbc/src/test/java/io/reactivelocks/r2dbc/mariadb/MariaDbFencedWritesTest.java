package io.reactivelocks.r2dbc.mariadb;

import static io.reactivelocks.r2dbc.mariadb.MariaDbTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.StaleTokenException;
import io.reactivelocks.r2dbc.FencedWrites;
import io.reactivelocks.r2dbc.MissingRowException;
import io.reactivelocks.r2dbc.SqlDialect;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@link FencedWrites} on MariaDB rows (the dialect detected from the r2dbc-mariadb driver): a lower token refused
 * with the row's fence and nothing changed, an equal token the same grant (also when the values do not change, which
 * MariaDB counts as no row affected), a missing row its own error, a paused holder's late write refused after the
 * lock was taken away, and concurrent writers with mixed tokens ending with the highest.
 */
class MariaDbFencedWritesTest {

    private static final String DATABASE = "fenced_rows";

    private static ConnectionFactory factory;
    private static LockStore session;

    @BeforeAll
    static void createTable() {
        MariaDbLockOptions options = MariaDbTestSupport.options(DATABASE);
        MariaDbTestSupport.exec("DROP TABLE IF EXISTS `" + DATABASE + "`.accounts");
        MariaDbTestSupport.exec("CREATE TABLE `" + DATABASE + "`.accounts (id VARCHAR(64) PRIMARY KEY, balance BIGINT, fence BIGINT)");
        MariaDbTestSupport.exec("INSERT INTO `" + DATABASE + "`.accounts VALUES ('acc-1', 0, NULL), ('acc-2', 0, 100),"
                + " ('acc-3', 0, NULL), ('acc-4', 0, NULL)");
        factory = MariaDbTestSupport.factory();
        session = MariaDbLocks.connect(MariaDbTestSupport.factory(), options);
    }

    @AfterAll
    static void close() {
        session.close().block(TIMEOUT);
    }

    private static Map<String, Object> row(String id) {
        return MariaDbTestSupport.sql("SELECT balance, fence FROM `" + DATABASE + "`.accounts WHERE id = ?", id).get(0);
    }

    private static FencedWrites accounts() {
        return FencedWrites.of(factory, "accounts", "id").in(DATABASE);
    }

    private static long number(Object value) {
        return ((Number) value).longValue();
    }

    @Test
    void aLowerTokenIsRefusedWithTheRowsFenceAndAnEqualOneIsTheSameGrant() {
        FencedWrites accounts = accounts();
        assertThat(accounts.dialect()).isEqualTo(SqlDialect.MARIADB);
        StepVerifier.create(accounts.write("acc-1", "balance", 10L, 5)).expectComplete().verify(TIMEOUT);
        StepVerifier.create(accounts.write("acc-1", "balance", 20L, 3))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class, s -> {
                    assertThat(s.token()).isEqualTo(3);
                    assertThat(s.fence()).hasValue(5);
                }))
                .verify(TIMEOUT);
        assertThat(number(row("acc-1").get("balance"))).isEqualTo(10);
        assertThat(number(row("acc-1").get("fence"))).isEqualTo(5);
        StepVerifier.create(accounts.write("acc-1", "balance", 10L, 5)).as("equal token, unchanged values: still written")
                .expectComplete().verify(TIMEOUT);
        StepVerifier.create(accounts.write("acc-2", "balance", 1L, 99))
                .expectErrorSatisfies(e -> assertThat(((StaleTokenException) e).fence()).hasValue(100))
                .verify(TIMEOUT);
        StepVerifier.create(accounts.write("no-such-row", "balance", 1L, 1000)).expectError(MissingRowException.class)
                .verify(TIMEOUT);
    }

    @Test
    void aPausedHoldersLateWriteIsRefused() {
        LockClient locks = session.locks(LockOptions.defaults());
        FencedWrites accounts = accounts();
        String name = "account:acc-3";
        Lease a = locks.acquire(name).block(TIMEOUT);
        // A pauses past its lease: the operator takes the lock away, and B is granted it
        session.admin().forceRelease(name).block(TIMEOUT);
        Lease b = locks.acquire(name).block(TIMEOUT);
        assertThat(b.token()).isGreaterThan(a.token());
        StepVerifier.create(accounts.write("acc-3", "balance", 2L, b.token())).expectComplete().verify(TIMEOUT);
        StepVerifier.create(accounts.write("acc-3", "balance", 1L, a.token()))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOfSatisfying(StaleTokenException.class,
                        s -> assertThat(s.fence()).hasValue(b.token())))
                .verify(TIMEOUT);
        assertThat(number(row("acc-3").get("balance"))).isEqualTo(2);
        assertThat(number(row("acc-3").get("fence"))).isEqualTo(b.token());
        b.release().block(TIMEOUT);
    }

    @Test
    void concurrentWritersWithMixedTokensEndWithTheHighest() {
        FencedWrites accounts = accounts();
        List<Long> tokens = new ArrayList<>();
        for (long t = 1; t <= 10; t++) {
            tokens.add(t);
            tokens.add(t);
        }
        Collections.shuffle(tokens);
        AtomicInteger refused = new AtomicInteger();
        Flux.fromIterable(tokens)
                .flatMap(t -> accounts.write("acc-4", "balance", t, t)
                        .onErrorResume(StaleTokenException.class, e -> {
                            assertThat(e.fence().getAsLong()).isGreaterThan(t);
                            refused.incrementAndGet();
                            return Mono.empty();
                        }), 8)
                .then()
                .block(TIMEOUT.multipliedBy(2));
        assertThat(number(row("acc-4").get("balance"))).isEqualTo(10);
        assertThat(number(row("acc-4").get("fence"))).isEqualTo(10);
        assertThat(refused.get()).isLessThan(tokens.size());
    }
}
