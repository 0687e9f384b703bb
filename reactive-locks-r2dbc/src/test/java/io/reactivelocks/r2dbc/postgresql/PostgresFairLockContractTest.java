package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockStore;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.FairLockContract;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The fair lock contract against a real PostgreSQL, plus the PostgreSQL specifics: the waiter rows and bad input. */
class PostgresFairLockContractTest extends FairLockContract {

    private static final PostgresLockOptions OPTIONS = PostgresLockOptions.builder().schema("fairlocks")
            .channel("fair_events").poolMaxSize(4).build();

    private static ConnectionFactory factory;
    private final List<io.reactivelocks.spi.LockBackend> abandoned = new ArrayList<>();

    @BeforeAll
    static void migrate() {
        factory = PostgresTestSupport.factory(PostgresTestSupport.shared());
        PostgresFairLockBackend b = new PostgresFairLockBackend(PostgresLockBackend.create(factory, OPTIONS), true);
        b.migrate().block(PostgresTestSupport.TIMEOUT);
        b.close().block(PostgresTestSupport.TIMEOUT);
    }

    @AfterEach
    void closeAbandoned() {
        abandoned.forEach(b -> b.close().block(STEP));
        abandoned.clear();
    }

    private final List<LockStore> sessions = new ArrayList<>();

    /** @return a new session over its own pool, closed after the test */
    private PostgresLockStore session() {
        PostgresLockStore s = PostgresLocks.connect(factory, OPTIONS);
        sessions.add(s);
        return s;
    }

    @AfterEach
    void closeSessions() {
        sessions.forEach(s -> s.close().block(STEP));
        sessions.clear();
    }

    @Override
    protected LockClient newClient() {
        return session().fairLocks(options());
    }

    @Override
    protected int waiting(String name) {
        return PostgresTestSupport.sql(factory, "SELECT owner FROM fairlocks.reactive_locks_waiters WHERE name = $1", name).size();
    }

    /** One grant call that queues the owner, whose turn is never subscribed: the row is never refreshed. */
    @Override
    protected void enqueueAbandonedWaiter(String name) {
        PostgresLockBackend b = PostgresLockBackend.create(factory, OPTIONS);
        abandoned.add(b);
        Attempt a = new PostgresFairLockBackend(b, false).tryGrant(new GrantRequest(name, GrantRequest.newOwner(),
                options().leaseTime(), true, LockClock.system())).block(STEP);
        assertThat(a).isInstanceOf(Attempt.Queued.class);
    }

    @Override
    protected void assertNothingLeft(String name) {
        assertThat(PostgresTestSupport.sql(factory, "SELECT owner FROM fairlocks.reactive_locks WHERE name = $1 AND owner <> ''", name))
                .as("lock row an owner left for '%s' (a released row stays, freed)", name).isEmpty();
        assertThat(waiting(name)).as("waiter rows of '%s'", name).isZero();
    }

    @Test
    void waitersAreRowsInLineWithServerDeadlines() {
        String name = name("rows");
        LockClient c = newClient();
        try {
            Lease holder = c.acquire(name, options()).block(STEP);
            PostgresFairLockBackend b = new PostgresFairLockBackend(PostgresLockBackend.create(factory, OPTIONS), true);
            abandoned.add(b);
            List<String> owners = List.of(GrantRequest.newOwner(), GrantRequest.newOwner());
            for (String owner : owners) {
                assertThat(b.tryGrant(new GrantRequest(name, owner, options().leaseTime(), true, LockClock.system())).block(STEP))
                        .isInstanceOf(Attempt.Queued.class);
            }
            List<Map<String, Object>> rows = PostgresTestSupport.sql(factory,
                    "SELECT seq, expires_at > now() AS live, expires_at <= now() + interval '3100 milliseconds' AS within"
                            + " FROM fairlocks.reactive_locks_waiters WHERE name = $1 ORDER BY seq", name);
            assertThat(rows).hasSize(2).allSatisfy(r -> assertThat(r).containsEntry("live", true).containsEntry("within", true));
            assertThat((Long) rows.get(0).get("seq")).isGreaterThan(holder.token());
            for (String owner : owners) {
                assertThat(b.release(name, owner).block(STEP)).as("a waiter's release deletes its row").isTrue();
            }
            assertThat(waiting(name)).isZero();
            holder.release().block(STEP);
        } finally {
            c.close().block(STEP);
        }
    }

    @Test
    void badInputFailsAtCallTime() {
        assertThatNullPointerException().isThrownBy(() -> session().fairLocks(null))
                .withMessageContaining("options");
        assertThatNullPointerException().isThrownBy(() -> PostgresLocks.connect((PostgresLockBackend) null))
                .withMessageContaining("backend");
        assertThatNullPointerException().isThrownBy(() -> PostgresLocks.connect((ConnectionFactory) null)).withMessageContaining("factory");
        assertThatNullPointerException().isThrownBy(() -> PostgresLocks.connect(factory, null)).withMessageContaining("postgresOptions");
    }
}
