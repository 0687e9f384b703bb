package io.reactivelocks.r2dbc.mariadb;

import static io.reactivelocks.r2dbc.mariadb.MariaDbTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.test.server.MariaDbServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A renewal batch is one request per {@value RenewBatch#CHUNK} leases ({@link RenewBatch}), and its
 * answer is per lease, in order: the leases held are renewed (their expiry moves), the others — a wrong
 * token, another owner, a name nobody holds, a released lease — are not, wherever they fall in the batch.
 * On a server of its own: the requests are the server's {@code Questions}, which count every client's
 * statements (on the shared server, another class's would be counted too).
 */
class MariaDbRenewBatchTest {

    private static final String DATABASE = "renew_batch";
    private static final int HELD = 100;

    private static MariaDbServer db;
    private static ConnectionFactory factory;

    @BeforeAll
    static void startServer() {
        db = MariaDbServer.start();
        factory = MariaDbTestSupport.factory(db);
        MariaDbTestSupport.exec(factory, "CREATE DATABASE `" + DATABASE + "`");
    }

    @AfterAll
    static void stopServer() {
        if (db != null) {
            db.close();
        }
    }

    /** Questions so far, read on {@code counter} (a connection opened before counting: no handshake counted). */
    private static long questions(Connection counter) {
        return Flux.from(counter.createStatement("SHOW GLOBAL STATUS LIKE 'Questions'").execute())
                .concatMap(r -> r.map((row, md) -> Long.parseLong(row.get(1, String.class)))).blockLast(TIMEOUT);
    }

    private static long expiresAtMicros(String name) {
        return ((Number) MariaDbTestSupport.sql(factory, "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', expires_at) AS us FROM `"
                + DATABASE + "`.`reactive_locks` WHERE name = ?", name).get(0).get("us")).longValue();
    }

    @Test
    void aBatchOfLeasesIsRenewedInOneRequestPerChunkWithAnAnswerPerLease() {
        MariaDbLockOptions options = MariaDbLockOptions.builder().database(DATABASE).poolMaxSize(4)
                .pollInterval(Duration.ofMillis(50)).build();
        LockStore store = MariaDbLocks.connect(factory, options);
        MariaDbLockBackend raw = MariaDbLocks.backend(factory, options);
        try {
            LockClient locks = store.locks(LockOptions.builder().leaseTime(Duration.ofMinutes(1)).build());
            List<Lease> leases = Flux.range(0, HELD).concatMap(i -> locks.acquire("renew-" + i)).collectList().block(TIMEOUT);
            assertThat(leases).hasSize(HELD);
            Lease released = leases.get(HELD - 1);
            released.release().block(TIMEOUT);
            raw.inspect("warm-up").block(TIMEOUT); // the raw backend's connection and schema step

            Duration lease = Duration.ofMinutes(5);
            List<RenewRequest> batch = new ArrayList<>();
            List<Boolean> expected = new ArrayList<>();
            for (int i = 0; i < HELD - 1; i++) {
                Lease l = leases.get(i);
                batch.add(new RenewRequest(new HeldLock(l.name(), l.owner(), l.token()), lease));
                expected.add(true);
                if (i % 30 == 7) { // not held, between held ones
                    batch.add(new RenewRequest(new HeldLock(l.name(), l.owner(), l.token() + 1), lease)); // wrong token
                    batch.add(new RenewRequest(new HeldLock(l.name(), "someone-else", l.token()), lease));
                    batch.add(new RenewRequest(new HeldLock("renew-nobody-" + i, l.owner(), l.token()), lease));
                    expected.add(false);
                    expected.add(false);
                    expected.add(false);
                }
            }
            batch.add(new RenewRequest(new HeldLock(released.name(), released.owner(), released.token()), lease));
            expected.add(false);
            long before = expiresAtMicros("renew-0");

            Connection counter = Mono.from(factory.create()).block(TIMEOUT);
            long q0 = questions(counter);
            List<RenewOutcome> outcomes = raw.renew(batch).block(TIMEOUT);
            long requests = questions(counter) - q0 - 1; // the first SHOW is counted
            Mono.from(counter.close()).block(TIMEOUT);

            assertThat(outcomes).extracting(RenewOutcome::renewed).containsExactlyElementsOf(expected);
            assertThat(requests).as("requests for %d leases", batch.size())
                    .isEqualTo((batch.size() + RenewBatch.CHUNK - 1) / RenewBatch.CHUNK);
            assertThat(expiresAtMicros("renew-0") - before).as("the first lease's expiry moved by about 4 minutes")
                    .isGreaterThan(Duration.ofMinutes(3).toNanos() / 1000);
        } finally {
            raw.close().block(TIMEOUT);
            store.close().block(TIMEOUT);
        }
    }
}
