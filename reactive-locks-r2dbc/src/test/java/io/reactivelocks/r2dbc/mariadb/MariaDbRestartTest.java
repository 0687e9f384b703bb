package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.server.MariaDbServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;

/**
 * The server crashes (SIGKILL) and comes back: tokens keep increasing, because they come from an
 * InnoDB sequence (a restart skips the unused part of its cache, it never goes back), and the same
 * session works again once the server answers (its pool drops the dead connections).
 */
class MariaDbRestartTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private static MariaDbServer db;
    private static ConnectionFactory factory;

    @BeforeAll
    static void startOwnServer() {
        db = MariaDbServer.start(); // its own: this class kills it
        factory = MariadbConnectionFactory.from(MariadbConnectionConfiguration.builder()
                .host(db.host()).port(db.port()).username(db.username()).password(db.password()).database(db.database())
                .connectTimeout(Duration.ofSeconds(2)).build());
    }

    @AfterAll
    static void stopServer() {
        db.close();
    }

    @Test
    void tokensKeepIncreasingAcrossACrashAndTheSessionWorksAgain() {
        LockStore store = MariaDbLocks.connect(factory, MariaDbLockOptions.builder().connectTimeout(Duration.ofSeconds(2)).build());
        try {
            LockClient locks = store.locks(LockOptions.builder().leaseTime(Duration.ofSeconds(2))
                    .requestTimeout(Duration.ofSeconds(2)).waitTimeout(TIMEOUT).build());
            String name = "restart-" + UUID.randomUUID();
            Lease before = locks.acquire(name).block(TIMEOUT);
            before.release().block(TIMEOUT);

            db.kill();
            db.restart();

            // the first requests may meet dead pooled connections: acquire retries transient errors until it is granted
            Lease after = locks.acquire(name).block(TIMEOUT);
            assertThat(after.token()).as("token after the crash").isGreaterThan(before.token());
            Lease other = locks.acquire(name + "-other").block(TIMEOUT);
            assertThat(other.token()).isGreaterThan(after.token());
            after.release().block(TIMEOUT);
            other.release().block(TIMEOUT);
        } finally {
            store.close().block(TIMEOUT);
        }
    }
}
