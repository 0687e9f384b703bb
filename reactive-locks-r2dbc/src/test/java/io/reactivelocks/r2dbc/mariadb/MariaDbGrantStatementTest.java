package io.reactivelocks.r2dbc.mariadb;

import static io.reactivelocks.r2dbc.mariadb.MariaDbTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.Connection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.semaphore.Semaphore;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The semaphore's and the read-write lock's grant is one anonymous compound statement that runs its own
 * transaction inside the server: when that transaction fails (here a lock wait timeout on the name's
 * guard row, held by another transaction) it is rolled back inside the statement, the client gets a
 * transient error after its retries, no transaction of the store is left open on its pooled
 * connections, and the store grants as soon as the guard row is free.
 */
class MariaDbGrantStatementTest {

    private static final String DATABASE = "grant_statement";

    private LockStore store;
    private Connection blocker;

    @BeforeEach
    void shortLockWaits() {
        // connections opened from now on wait 1 s for a row lock instead of 50 s
        MariaDbTestSupport.exec("SET GLOBAL innodb_lock_wait_timeout = 1");
        store = MariaDbLocks.connect(MariaDbTestSupport.factory(), MariaDbTestSupport.options(DATABASE));
        blocker = Mono.from(MariaDbTestSupport.factory().create()).block(TIMEOUT);
    }

    @AfterEach
    void restore() {
        MariaDbTestSupport.exec("SET GLOBAL innodb_lock_wait_timeout = 50");
        if (blocker != null) {
            Mono.from(blocker.close()).block(TIMEOUT);
        }
        if (store != null) {
            store.close().block(TIMEOUT);
        }
    }

    /** Holds the name's guard row in an open transaction of another connection. */
    private void holdGuardRow(String table, String name) {
        Flux.concat(Mono.from(blocker.beginTransaction()),
                Flux.from(blocker.createStatement("SELECT token FROM `" + DATABASE + "`.`" + table
                        + "` WHERE name = ? AND owner = '' FOR UPDATE").bind(0, name).execute()).concatMap(r -> r.map((row, md) -> 1)))
                .blockLast(TIMEOUT);
    }

    private void releaseGuardRow() {
        Mono.from(blocker.commitTransaction()).block(TIMEOUT);
    }

    /** @return the open InnoDB transactions other than the blocker's */
    private List<Map<String, Object>> otherTransactions() {
        Number blockerId = Flux.from(blocker.createStatement("SELECT CONNECTION_ID() AS id").execute())
                .concatMap(r -> r.map((row, md) -> (Number) row.get("id"))).blockLast(TIMEOUT);
        return MariaDbTestSupport.sql("SELECT trx_mysql_thread_id, trx_state FROM information_schema.innodb_trx"
                + " WHERE trx_mysql_thread_id <> ?", blockerId.longValue());
    }

    private static void transientFailure(Mono<Lease> attempt) {
        StepVerifier.create(attempt)
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(LockBackendException.class);
                    assertThat(((LockBackendException) e).isTransient()).as("a rolled back grant is transient").isTrue();
                    assertThat(e).hasMessageContaining("Lock wait timeout");
                })
                .verify(TIMEOUT);
    }

    @Test
    void aSemaphoreGrantRolledBackInsideItsStatementLeavesNoTransactionOpen() {
        Semaphore semaphores = store.semaphores(LockOptions.defaults());
        semaphores.acquire("sem", 1).flatMap(Lease::release).block(TIMEOUT); // the table and the guard row
        holdGuardRow(MariaDbSemaphoreStore.tableName(MariaDbTestSupport.options(DATABASE)), "sem");
        transientFailure(semaphores.tryAcquire("sem", 1));
        assertThat(otherTransactions()).as("transactions left open by the store").isEmpty();
        releaseGuardRow();
        Lease lease = semaphores.tryAcquire("sem", 1).block(TIMEOUT);
        assertThat(lease).isNotNull();
        assertThat(lease.token()).isPositive();
        lease.release().block(TIMEOUT);
    }

    @Test
    void aReadWriteGrantRolledBackInsideItsStatementLeavesNoTransactionOpen() {
        ReadWriteLock rw = store.readWriteLocks(LockOptions.defaults());
        rw.write().acquire("rw").flatMap(Lease::release).block(TIMEOUT);
        holdGuardRow(MariaDbReadWriteStore.tableName(MariaDbTestSupport.options(DATABASE)), "rw");
        transientFailure(rw.read().tryAcquire("rw"));
        assertThat(otherTransactions()).as("transactions left open by the store").isEmpty();
        releaseGuardRow();
        Lease lease = rw.write().tryAcquire("rw").block(TIMEOUT);
        assertThat(lease).isNotNull();
        lease.release().block(TIMEOUT);
    }
}
