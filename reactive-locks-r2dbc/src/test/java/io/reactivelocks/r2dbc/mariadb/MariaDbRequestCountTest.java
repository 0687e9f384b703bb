package io.reactivelocks.r2dbc.mariadb;

import static io.reactivelocks.r2dbc.mariadb.MariaDbTestSupport.TIMEOUT;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.RequestCountContract;
import io.reactivelocks.test.server.MariaDbServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;
import reactor.core.publisher.Mono;

/**
 * Requests per operation as MariaDB counts them, on a server of this class alone: its
 * {@code Questions} status (every statement a client sends), less the reads of it, made on one
 * connection opened before anything is counted.
 */
class MariaDbRequestCountTest extends RequestCountContract {

    private static MariaDbServer db;
    private static ConnectionFactory factory;
    private static Connection counter;
    private static long reads;

    @BeforeAll
    static void startServer() {
        db = MariaDbServer.start();
        factory = MariadbConnectionFactory.from(MariadbConnectionConfiguration.builder()
                .host(db.host()).port(db.port()).username(db.username()).password(db.password())
                .database(db.database()).connectTimeout(Duration.ofSeconds(3)).build());
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
            // acquire: one READ COMMITTED transaction of 7 statements (SET TRANSACTION ISOLATION LEVEL, START
            // TRANSACTION, the row's placeholder INSERT .. ON DUPLICATE KEY, SELECT .. FOR UPDATE, NEXTVAL, UPDATE,
            // COMMIT); release: one DELETE
            case LOCK_PAIR -> 8;
            // as the lock, plus the DELETE of the name's expired permits; the permit is an INSERT
            case SEMAPHORE_PAIR -> 9;
            // as the semaphore, plus a DELETE of the owner's own row before its INSERT
            case READ_PAIR, WRITE_PAIR -> 10;
            // a transaction of 10 (the lock's, plus a DELETE of expired waiters, a SELECT of the line and a DELETE
            // of the owner's waiter row); release: DELETE of the waiter row again, and of the lock row
            case FAIR_PAIR -> 12;
            // one UPDATE renews every lease due in the tick
            case RENEWAL_TICK -> 1;
            // per handoff the release (announced to the waiters of this backend without a statement) and the
            // woken waiter's 7-statement grant; the chain adds the last grantee's release: 8 * 6 + 1 = 49
            case HANDOFF -> (8.0 * WAITERS + 1) / WAITERS;
        };
    }
}
