package io.reactivelocks.r2dbc.mariadb;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockStore;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.FairLockContract;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.AfterEach;

/** The fair lock contract against a real MariaDB: each client on a session of its own. */
class MariaDbFairLockContractTest extends FairLockContract {

    private static final MariaDbLockOptions OPTIONS = MariaDbTestSupport.options("fairlocks");
    private static final MariaDbLockBackend ABANDONED = MariaDbLockBackend.create(MariaDbTestSupport.factory(), OPTIONS);

    private final List<LockStore> sessions = new ArrayList<>();

    @AfterEach
    void closeSessions() {
        sessions.forEach(s -> s.close().block(STEP));
        sessions.clear();
    }

    /**
     * The tables first (a first operation through the SPI runs the store's first-use step), bounded generously:
     * the first statements on a fresh server may be slow on a loaded machine.
     */
    @BeforeAll
    static void migrate() {
        ABANDONED.migrate().then(new MariaDbFairLockBackend(ABANDONED).release("warm-up", "no owner")).block(java.time.Duration.ofSeconds(60));
    }

    @AfterAll
    static void closeBackend() {
        ABANDONED.close().block(MariaDbTestSupport.TIMEOUT);
    }

    @Override
    protected LockClient newClient() {
        LockStore s = MariaDbLocks.connect(MariaDbTestSupport.factory(), OPTIONS);
        sessions.add(s);
        return s.fairLocks(options());
    }

    @Override
    protected int waiting(String name) {
        return MariaDbTestSupport.sql("SELECT owner FROM fairlocks.reactive_locks_waiters WHERE name = ?", StoredText.encode(name)).size();
    }

    /** One grant call that queues the owner, whose turn is never subscribed: the row is never refreshed. */
    @Override
    protected void enqueueAbandonedWaiter(String name) {
        Attempt a = new MariaDbFairLockBackend(ABANDONED).tryGrant(new GrantRequest(name, GrantRequest.newOwner(),
                options().leaseTime(), true, LockClock.system())).block(STEP);
        assertThat(a).isInstanceOf(Attempt.Queued.class);
    }

    @Override
    protected void assertNothingLeft(String name) {
        assertThat(MariaDbTestSupport.sql("SELECT owner FROM fairlocks.reactive_locks WHERE name = ?", StoredText.encode(name)))
                .as("lock row of '%s'", name).isEmpty();
        assertThat(waiting(name)).as("waiter rows of '%s'", name).isZero();
    }
}
