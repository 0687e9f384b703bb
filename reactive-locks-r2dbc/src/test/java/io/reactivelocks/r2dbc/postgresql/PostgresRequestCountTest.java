package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;

import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.reactivelocks.LockStore;
import io.reactivelocks.test.RequestCountContract;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Requests per operation as PostgreSQL counts them: the calls of every top-level statement run in a
 * database of this class alone, from {@code pg_stat_statements} (loaded by the shared server), each
 * counted when it ends — so a statement answered is a statement counted — but the reads of the count
 * itself, made on one connection opened before anything is counted. The statements run inside those
 * (a PL/pgSQL function's, {@code pg_stat_statements.track = all} for this database) are the server
 * commands the contract bounds as well: none on any path counted here, so a function call with
 * statements of its own added to a hot path fails the build.
 */
class PostgresRequestCountTest extends RequestCountContract {

    private static final String DATABASE = "counts_" + UUID.randomUUID().toString().substring(0, 8);

    private static PostgresqlConnectionFactory factory;
    private static PostgresqlConnection counter;

    @BeforeAll
    static void createDatabase() {
        PostgresServer pg = PostgresTestSupport.shared();
        PostgresTestSupport.exec(PostgresTestSupport.factory(pg), "CREATE DATABASE " + DATABASE);
        factory = PostgresTestSupport.factory(pg, DATABASE);
        counter = factory.create().block(TIMEOUT);
        run("CREATE EXTENSION pg_stat_statements");
        // the sessions opened after this (every lock client's) record nested statements too, marked not top-level
        run("ALTER DATABASE " + DATABASE + " SET pg_stat_statements.track = 'all'");
    }

    @AfterAll
    static void closeCounter() {
        if (counter != null) {
            counter.close().block(TIMEOUT);
        }
    }

    private static void run(String sql) {
        Mono.from(counter.createStatement(sql).execute()).flatMap(r -> Mono.from(r.getRowsUpdated())).block(TIMEOUT);
    }

    @Override
    protected LockStore connect(Duration leaseTime) {
        return PostgresLocks.connect(factory, PostgresLockOptions.builder().schema("request_counts").poolMaxSize(4).build());
    }

    @Override
    protected long serverRequests() {
        return calls(true);
    }

    /** The statements run inside the top-level ones: a function's statements (none on the paths counted today). */
    @Override
    protected long serverCommands() {
        return calls(false);
    }

    @Override
    protected double commandsPer(Operation operation) {
        return switch (operation) {
            // the lock's statements are plain SQL: the row's watched_until says whether to call the notify function
            case LOCK_PAIR, RENEWAL_TICK, PERMIT_RENEWAL -> 0;
            // per pair, as pg_stat_statements lists them: the grant function's locks (the name's, its watcher key's and its
            // observers' key's, one statement), one read of the name's rows (unexpired, expired, the owner's), one read of
            // the name's watchers (none), the INSERT with its token; the release is one DELETE that reads the watch from
            // its row (nothing nested). 6 in stop 57's first step (the release still called the notify function: its lock,
            // its EXISTS), 8 in stop 55 (the grant called it too), 10 before (a DELETE, an EXISTS and a count)
            case SEMAPHORE_PAIR -> 4;
            // the read-write grant function as the semaphore's, and the same release: 4 (6, 8 and 12 before, as above)
            case READ_PAIR, READ_BESIDE_READER_PAIR, WRITE_PAIR -> 4;
            // the name lock, the line's and the holder's reads, the INSERT, two DELETEs, a SELECT (no notify call)
            case FAIR_PAIR -> 7;
            // the release's notify function finds the waiters' watcher rows (its shared lock and EXISTS per handoff),
            // the first waiter's watch registration and the last one's removal: 16 for the chain
            case HANDOFF -> 16.0 / WAITERS;
        };
    }

    private static long calls(boolean topLevel) {
        return Mono.from(counter.createStatement("SELECT coalesce(sum(calls), 0)::bigint AS n FROM pg_stat_statements"
                        + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                        + " AND toplevel = " + topLevel + " AND query NOT LIKE '%pg_stat_statements%'").execute())
                .flatMap(r -> Mono.from(r.map((row, md) -> row.get("n", Long.class))))
                .block(TIMEOUT);
    }

    /** By statement: its first words (the scripts' comments are stripped, so a statement starts with its SQL). */
    @Override
    protected java.util.Map<String, Long> requestsByKind() {
        java.util.Map<String, Long> kinds = new java.util.TreeMap<>();
        Flux.from(counter.createStatement("SELECT CASE WHEN toplevel THEN '' ELSE 'inside: ' END"
                        + " || left(regexp_replace(query, '\\s+', ' ', 'g'), 40) AS q,"
                        + " sum(calls)::bigint AS n FROM pg_stat_statements"
                        + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                        + " AND query NOT LIKE '%pg_stat_statements%' GROUP BY 1").execute())
                .flatMap(r -> r.map((row, md) -> java.util.Map.entry(row.get("q", String.class), row.get("n", Long.class))))
                .doOnNext(e -> kinds.merge(e.getKey(), e.getValue(), Long::sum))
                .blockLast(TIMEOUT);
        return kinds;
    }

    @Override
    protected double requestsPer(Operation operation) {
        return switch (operation) {
            // every concept: one statement to acquire, one to release (NOTIFY only where a client watches the name)
            case LOCK_PAIR, SEMAPHORE_PAIR, READ_PAIR, READ_BESIDE_READER_PAIR, WRITE_PAIR, FAIR_PAIR -> 2;
            // one statement renews every lease due in the tick
            // one UPDATE renews every permit due in the tick (semaphore_renew.sql, the leases as unnest arrays)
            case PERMIT_RENEWAL -> 1.0 / RENEWED_PERMITS;
            case RENEWAL_TICK -> 1;
            // per handoff the release and the notified waiter's grant; the chain adds the last grantee's release
            // and the DELETE of the client's watcher row when its last waiter leaves: 2 * 6 + 2 = 14
            case HANDOFF -> (2.0 * WAITERS + 2) / WAITERS;
        };
    }
}
