package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.postgresql.api.PostgresqlConnection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * NOTIFY only when someone watches (the watchers table): counted on a raw {@code LISTEN} connection
 * of the backend's channel, each count closed by a sentinel notification sent after the statements
 * (notifications arrive in commit order, so nothing of theirs can come after it).
 */
class PostgresWatchersTest {

    private static final String SCHEMA = "watchers_test";
    private static final String CHANNEL = "watchers_test_locks";
    /** Only a notification (or the re-check after a registration) can wake a waiter: 10-minute backoff, 60 s lease. */
    private static final LockOptions SLOW = LockOptions.builder().leaseTime(Duration.ofSeconds(60))
            .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
            .build();

    private static PostgresServer pg;
    private static PostgresqlConnectionFactory factory;
    private static PostgresLockOptions options;
    private static PostgresqlConnection listening;
    private static final ConcurrentLinkedQueue<String> heard = new ConcurrentLinkedQueue<>();
    private static Disposable hearing;

    private final List<PostgresLockBackend> backends = new ArrayList<>();
    private final List<LockClient> clients = new ArrayList<>();
    private final List<LockStore> sessions = new ArrayList<>();

    @BeforeAll
    static void start() {
        pg = PostgresTestSupport.shared();
        factory = PostgresTestSupport.factory(pg);
        // short health checks: watcher rows live 3 × 300 ms + 1 s
        options = PostgresLockOptions.builder().schema(SCHEMA).channel(CHANNEL).poolMaxSize(4)
                .healthCheck(Duration.ofMillis(300), Duration.ofSeconds(1)).build();
        PostgresLockBackend schema = PostgresLockBackend.create(factory, options);
        schema.migrate().then(schema.close()).block(TIMEOUT);
        listening = factory.create().block(TIMEOUT);
        hearing = listening.getNotifications().subscribe(n -> heard.add(n.getParameter()));
        Flux.from(listening.createStatement("LISTEN " + CHANNEL).execute()).flatMap(r -> r.getRowsUpdated()).blockLast(TIMEOUT);
    }

    @AfterAll
    static void stop() {
        hearing.dispose();
        listening.close().block(TIMEOUT);
    }

    @AfterEach
    void closeAll() {
        sessions.forEach(c -> c.close().block(TIMEOUT));
        clients.forEach(c -> c.close().block(TIMEOUT));
        backends.forEach(b -> b.close().block(TIMEOUT));
    }

    private PostgresLockBackend backend() {
        return backend(options);
    }

    private PostgresLockBackend backend(PostgresLockOptions o) {
        PostgresLockBackend b = PostgresLockBackend.create(factory, o);
        backends.add(b);
        return b;
    }

    private Semaphore semaphore() {
        return semaphore(options);
    }

    private Semaphore semaphore(PostgresLockOptions o) {
        LockStore session = PostgresLocks.connect(backend(o));
        sessions.add(session);
        return session.semaphores(SLOW);
    }

    private LockClient client(PostgresLockBackend backend) {
        LockClient c = LockClient.create(backend, SLOW);
        clients.add(c);
        return c;
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    /** @return the notifications heard from now until a sentinel sent after everything before it committed */
    private static List<String> heardUntilNow(Runnable work) {
        heard.clear();
        work.run();
        String sentinel = "sentinel " + UUID.randomUUID();
        PostgresTestSupport.sql(factory, "SELECT pg_notify($1, $2)", CHANNEL, sentinel);
        await().atMost(TIMEOUT).until(() -> heard.contains(sentinel));
        List<String> all = new ArrayList<>(heard);
        all.remove(sentinel);
        return all;
    }

    private static long watcherRows(String key) {
        return ((Number) PostgresTestSupport.sql(factory, "SELECT count(*) AS n FROM " + SqlIdentifiers.qualified(SCHEMA,
                options.table() + "_watchers") + " WHERE key = $1", key).get(0).get("n")).longValue();
    }

    @Test
    void anUncontendedAcquireAndReleaseSendNoNotifyAWatchedNameIsNotified() {
        LockClient locks = client(backend());
        String name = unique("quiet");
        assertThat(heardUntilNow(() -> locks.acquire(name).flatMap(Lease::release).block(TIMEOUT))).isEmpty();

        PostgresLockBackend watcher = backend();
        ConcurrentLinkedQueue<LockEvent> events = new ConcurrentLinkedQueue<>();
        Disposable watching = watcher.events(name).subscribe(events::add);
        try {
            await().atMost(TIMEOUT).until(() -> events.contains(new LockEvent.Subscribed(name)));
            assertThat(watcherRows(name)).isEqualTo(1);
            List<String> told = heardUntilNow(() -> locks.acquire(name).flatMap(Lease::release).block(TIMEOUT));
            assertThat(told).hasSize(2);
            assertThat(told.get(0)).startsWith("A ").endsWith(name);
            assertThat(told.get(1)).startsWith("R ").endsWith(name);
        } finally {
            watching.dispose();
        }
        // the last subscriber left: the row goes, and with it the notifications
        await().atMost(TIMEOUT).until(() -> watcherRows(name) == 0);
        assertThat(heardUntilNow(() -> locks.acquire(name).flatMap(Lease::release).block(TIMEOUT))).isEmpty();
    }

    @Test
    void aWaiterIsWokenByTheReleaseAndAnObserverSeesEveryChange() {
        LockClient holder = client(backend());
        LockClient waiter = client(backend());
        String name = unique("wake");
        ConcurrentLinkedQueue<LockState> states = new ConcurrentLinkedQueue<>();
        Disposable observing = waiter.observe(name).subscribe(states::add);
        Lease first = holder.acquire(name).block(TIMEOUT);
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiting = waiter.acquire(name).subscribe(got::set);
        try {
            await().atMost(TIMEOUT).until(() -> states.stream().anyMatch(s -> s instanceof LockState.Held h
                    && h.token() == first.token()));
            await().atMost(TIMEOUT).until(() -> watcherRows(name) == 1);
            first.release().block(TIMEOUT);
            // the lease is 60 s and the backoff 10 min: only the release's notification wakes the waiter
            await().atMost(Duration.ofSeconds(8)).until(() -> got.get() != null);
            assertThat(got.get().token()).isGreaterThan(first.token());
            await().atMost(TIMEOUT).until(() -> states.stream().anyMatch(s -> s instanceof LockState.Held h
                    && h.token() == got.get().token()));
            got.get().release().block(TIMEOUT);
            await().atMost(TIMEOUT).until(() -> states.stream().reduce((x, y) -> y).orElseThrow() instanceof LockState.Free);
        } finally {
            waiting.dispose();
            observing.dispose();
        }
    }

    @Test
    void aWaitersSubscriptionAnnouncesReleasesOnlyAnObserverAlsoGrants() {
        LockClient locks = client(backend());
        String name = unique("waiting");
        String observerKey = NotificationPayload.observerKey(name);
        PostgresLockBackend waiter = backend();
        ConcurrentLinkedQueue<LockEvent> waits = new ConcurrentLinkedQueue<>();
        Disposable waiting = waiter.wakeUps(name).subscribe(waits::add);
        Disposable observing = null;
        try {
            await().atMost(TIMEOUT).until(() -> waits.contains(new LockEvent.Subscribed(name)));
            assertThat(watcherRows(name)).isEqualTo(1);
            assertThat(watcherRows(observerKey)).isZero();
            // a handoff's grant costs no NOTIFY while only waiters listen
            List<String> told = heardUntilNow(() -> locks.acquire(name).flatMap(Lease::release).block(TIMEOUT));
            assertThat(told).hasSize(1);
            assertThat(told.get(0)).startsWith("R ").endsWith(name);

            PostgresLockBackend observer = backend();
            ConcurrentLinkedQueue<LockEvent> seen = new ConcurrentLinkedQueue<>();
            observing = observer.events(name).subscribe(seen::add);
            await().atMost(TIMEOUT).until(() -> seen.contains(new LockEvent.Subscribed(name)));
            assertThat(watcherRows(observerKey)).isEqualTo(1);
            told = heardUntilNow(() -> locks.acquire(name).flatMap(Lease::release).block(TIMEOUT));
            assertThat(told).hasSize(2);
            assertThat(told.get(0)).startsWith("A ").endsWith(name);
            assertThat(told.get(1)).startsWith("R ").endsWith(name);
            await().atMost(TIMEOUT).until(() -> seen.stream().anyMatch(e -> e instanceof LockEvent.Acquired));

            // the observer left: its key goes, the waiter's stays, and grants are quiet again
            observing.dispose();
            await().atMost(TIMEOUT).until(() -> watcherRows(observerKey) == 0);
            assertThat(watcherRows(name)).isEqualTo(1);
            told = heardUntilNow(() -> locks.acquire(name).flatMap(Lease::release).block(TIMEOUT));
            assertThat(told).hasSize(1);
            assertThat(told.get(0)).startsWith("R ").endsWith(name);
        } finally {
            waiting.dispose();
            if (observing != null) {
                observing.dispose();
            }
        }
    }

    /**
     * Observers come and go while the lock changes hands: a grant takes the lock row and then the observer key's
     * advisory lock, a registration the same two in the same order. In the other order (the observer key sorted
     * first, as a plain sort puts a backslash before letters) they wait for each other: a deadlock the server
     * breaks after a second by failing one of them — here a grant's error or a registration that never says
     * {@code Subscribed} in time.
     */
    @Test
    void observersComingAndGoingDuringHandoffsNeverDeadlockAGrant() {
        String name = unique("churn");
        PostgresLockBackend a = backend();
        PostgresLockBackend b = backend();
        PostgresLockBackend observer = backend();
        // a waiter keeps the name watched, so every grant checks for observers
        Disposable waiting = a.wakeUps(name).subscribe();
        try {
            handoffsBesideWatchers(List.of(a, b), (backend, owner) -> backend.tryGrant(new GrantRequest(name, owner,
                            Duration.ofSeconds(30), false, io.reactivelocks.LockClock.system()))
                    .flatMap(attempt -> attempt instanceof Attempt.Granted ? backend.release(name, owner) : Mono.just(false)),
                    i -> observer.events(name), NotificationPayload.observerKey(name));
        } finally {
            waiting.dispose();
        }
    }

    /**
     * The semaphore's grant takes its name's lock, then its watcher key's and its observer key's locks shared; a
     * registration takes the same keys exclusively in the same order and then marks the name's rows; a release
     * takes none. Waiters and observers coming and going while permits change hands must never deadlock (the
     * server would fail one side after a second: a grant's or release's error, or a registration without
     * {@code Subscribed} in time).
     */
    @Test
    void semaphoreWatchersComingAndGoingDuringHandoffsNeverDeadlockAGrant() {
        String name = unique("sem-churn");
        PostgresSemaphoreStore watcher = new PostgresSemaphoreStore(backend(), false);
        handoffsBesideWatchers(List.of(new PostgresSemaphoreStore(backend(), false), new PostgresSemaphoreStore(backend(), false)),
                (store, owner) -> store.tryGrant(name, List.of(owner), 1, Duration.ofSeconds(30))
                        .flatMap(g -> g instanceof io.reactivelocks.spi.semaphore.PermitGrant.Granted
                                ? store.release(name, owner) : Mono.just(false)),
                // a waiter's registration (the key alone) and an observer's (the key and the observer key) in turn
                i -> i % 2 == 0 ? watcher.wakeUps(name) : watcher.events(name), "\\s" + name);
    }

    /**
     * Clients grant and release one name in a loop while a watcher registers 20 times (each registration until its
     * {@code Subscribed}, then gone: its key's row deleted); no grant or release may fail and some must succeed.
     *
     * @param clients     the clients handing the name over
     * @param handoff     one grant and, when granted, its release by {@code client} for {@code owner}: true when released
     * @param registering the i-th registration's events
     * @param watchedKey  the watcher key whose row each registration leaves behind until it is gone
     */
    private <C> void handoffsBesideWatchers(List<C> clients, java.util.function.BiFunction<C, String, Mono<Boolean>> handoff,
            java.util.function.IntFunction<Flux<LockEvent>> registering, String watchedKey) {
        AtomicReference<Throwable> grantError = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicLong grants = new java.util.concurrent.atomic.AtomicLong();
        Sinks.Empty<Void> done = Sinks.empty();
        List<Disposable> loops = new ArrayList<>();
        for (C client : clients) {
            String owner = io.reactivelocks.spi.GrantRequest.newOwner();
            loops.add(Mono.defer(() -> handoff.apply(client, owner))
                    .doOnNext(released -> {
                        if (released) {
                            grants.incrementAndGet();
                        }
                    })
                    .repeat()
                    .takeUntilOther(done.asMono())
                    .subscribe(null, grantError::set));
        }
        try {
            for (int i = 0; i < 20; i++) {
                StepVerifier.create(registering.apply(i).filter(e -> e instanceof LockEvent.Subscribed).take(1))
                        .expectNextCount(1)
                        .expectComplete()
                        .verify(Duration.ofSeconds(5));
                await().atMost(TIMEOUT).until(() -> watcherRows(watchedKey) == 0);
            }
            assertThat(grantError.get()).isNull();
            assertThat(grants.get()).isPositive();
        } finally {
            done.tryEmitEmpty();
            loops.forEach(Disposable::dispose);
        }
        assertThat(grantError.get()).isNull();
    }

    @Test
    void aSemaphoreWaiterIsWokenByTheReleaseAndAnUncontendedPermitSendsNoNotify() {
        Semaphore holder = semaphore();
        Semaphore waiter = semaphore();
        String name = unique("sem");
        assertThat(heardUntilNow(() -> holder.acquire(name, 1).flatMap(Lease::release).block(TIMEOUT))).isEmpty();
        Lease first = holder.acquire(name, 1).block(TIMEOUT);
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiting = waiter.acquire(name, 1).subscribe(got::set);
        try {
            await().atMost(TIMEOUT).until(() -> watcherRows("\\s" + name) == 1);
            first.release().block(TIMEOUT);
            await().atMost(Duration.ofSeconds(8)).until(() -> got.get() != null);
            assertThat(got.get().token()).isGreaterThan(first.token());
            got.get().release().block(TIMEOUT);
        } finally {
            waiting.dispose();
        }
    }

    /**
     * As a lock's: a semaphore's or read-write lock's waiters register its key for the releases only, and its
     * grant function announces a grant only while an observer's key is registered (issue 30: before, every grant
     * of a name with waiters sent a NOTIFY, a serialized commit, that no waiter reads).
     */
    @Test
    void aSemaphoreOrReadWriteLocksWaitersHearReleasesOnlyAnObserverAlsoGrants() {
        LockStore session = PostgresLocks.connect(backend());
        sessions.add(session);
        Semaphore permits = session.semaphores(SLOW);
        io.reactivelocks.rwlock.ReadWriteLock rw = session.readWriteLocks(SLOW);
        grantsAnnouncedToObserversOnly("\\s", new PostgresSemaphoreStore(backend(), false),
                name -> permits.acquire(name, 2).flatMap(Lease::release).block(TIMEOUT));
        grantsAnnouncedToObserversOnly("\\w", new PostgresReadWriteStore(backend(), false),
                name -> rw.write().acquire(name).flatMap(Lease::release).block(TIMEOUT));
    }

    private void grantsAnnouncedToObserversOnly(String prefix, PostgresGrantStore store, java.util.function.Consumer<String> grantAndRelease) {
        String name = unique("grants");
        String key = prefix + name;
        String observerKey = NotificationPayload.observerKey(key);
        ConcurrentLinkedQueue<LockEvent> waits = new ConcurrentLinkedQueue<>();
        Disposable waiting = store.wakeUps(name).subscribe(waits::add);
        Disposable observing = null;
        try {
            await().atMost(TIMEOUT).until(() -> waits.contains(new LockEvent.Subscribed(name)));
            assertThat(watcherRows(key)).as(key).isEqualTo(1);
            assertThat(watcherRows(observerKey)).as(observerKey).isZero();
            List<String> told = heardUntilNow(() -> grantAndRelease.accept(name));
            assertThat(told).as("%s: a waiter's subscription only", key).hasSize(1);
            assertThat(told.get(0)).startsWith("R ").contains(name);
            assertThat(waits).noneMatch(e -> e instanceof LockEvent.Acquired);

            ConcurrentLinkedQueue<LockEvent> seen = new ConcurrentLinkedQueue<>();
            observing = store.events(name).subscribe(seen::add);
            await().atMost(TIMEOUT).until(() -> seen.contains(new LockEvent.Subscribed(name)));
            assertThat(watcherRows(observerKey)).as(observerKey).isEqualTo(1);
            told = heardUntilNow(() -> grantAndRelease.accept(name));
            assertThat(told).as("%s: observed", key).hasSize(2);
            assertThat(told.get(0)).startsWith("A ").contains(name);
            assertThat(told.get(1)).startsWith("R ").contains(name);
            await().atMost(TIMEOUT).until(() -> seen.stream().anyMatch(e -> e instanceof LockEvent.Acquired));

            observing.dispose();
            await().atMost(TIMEOUT).until(() -> watcherRows(observerKey) == 0);
            told = heardUntilNow(() -> grantAndRelease.accept(name));
            assertThat(told).as("%s: the observer left", key).hasSize(1);
            assertThat(told.get(0)).startsWith("R ").contains(name);
        } finally {
            waiting.dispose();
            if (observing != null) {
                observing.dispose();
            }
        }
    }

    /** @return the options of a fresh schema, created by {@code migrate()} (a test then ages it) */
    private PostgresLockOptions migratedSchema() {
        PostgresLockOptions o = options.mutate().schema("old_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12)).build();
        PostgresLockBackend first = PostgresLockBackend.create(factory, o);
        backends.add(first);
        first.migrate().block(TIMEOUT);
        return o;
    }

    /** A schema whose watch function predates the observer keys gets the new functions on the first use of a newer client. */
    @Test
    void aWatchFunctionOfAnOlderProtocolIsReplacedOnFirstUse() {
        PostgresLockOptions o = migratedSchema();
        String schema = o.schema();
        String watch = SqlIdentifiers.qualified(schema, "reactive_locks_watch") + "(text[], text, bigint)";
        String comment = "SELECT obj_description(to_regprocedure('" + watch + "'), 'pg_proc') AS c";
        assertThat(PostgresTestSupport.sql(factory, comment).get(0).get("c")).asString().contains("observer keys last");
        PostgresTestSupport.exec(factory, "COMMENT ON FUNCTION " + watch + " IS NULL"); // as the older versions left it
        PostgresLockBackend upgraded = PostgresLockBackend.create(factory, o);
        backends.add(upgraded);
        Lease lease = client(upgraded).acquire("n").block(TIMEOUT);
        assertThat(lease).isNotNull();
        lease.release().block(TIMEOUT);
        assertThat(PostgresTestSupport.sql(factory, comment).get(0).get("c")).asString().contains("observer keys last");
    }

    @Test
    void aSchemaOfAnOlderVersionWithoutWatchersIsMigratedOnFirstUse() {
        PostgresLockOptions o = migratedSchema();
        String schema = o.schema();
        PostgresTestSupport.exec(factory, "DROP TABLE " + SqlIdentifiers.qualified(schema, "reactive_locks_watchers")
                + "; DROP FUNCTION " + SqlIdentifiers.qualified(schema, "reactive_locks_notify") + "(text, text, text)");
        PostgresLockBackend upgraded = PostgresLockBackend.create(factory, o);
        backends.add(upgraded);
        LockClient locks = client(upgraded);
        // the check on first use finds the watchers missing and runs the (idempotent) schema script again
        Lease lease = locks.acquire("n").block(TIMEOUT);
        assertThat(lease).isNotNull();
        lease.release().block(TIMEOUT);
        assertThat(PostgresTestSupport.count(factory, schema, "reactive_locks_watchers")).isZero();
    }

    /**
     * A semaphore's permits table of an older version has no {@code watched_until}: the check on first use finds
     * it missing and runs the semaphore's script again, which adds it; until then the watch function leaves the
     * table alone (a waiter registering on it still works). Then a waiter's registration marks the held permit, and
     * its release wakes the waiter.
     */
    @Test
    void aPermitsTableOfAnOlderVersionGetsItsWatchColumnOnFirstUse() {
        PostgresLockOptions o = migratedSchema();
        String permits = SqlIdentifiers.qualified(o.schema(), "reactive_locks_permits");
        LockStore first = PostgresLocks.connect(backend(o));
        sessions.add(first);
        first.semaphores(SLOW).acquire("s", 1).flatMap(Lease::release).block(TIMEOUT);
        PostgresTestSupport.exec(factory, "ALTER TABLE " + permits + " DROP COLUMN watched_until");
        // a registration on the older table: the watch function leaves its rows alone
        PostgresTestSupport.sql(factory, "SELECT " + SqlIdentifiers.qualified(o.schema(), "reactive_locks_watch")
                + "(ARRAY['\\ss'], 'older', 1000000) AS k");
        LockStore upgraded = PostgresLocks.connect(backend(o));
        sessions.add(upgraded);
        Semaphore holder = upgraded.semaphores(SLOW);
        Semaphore waiter = semaphore(o);
        Lease held = holder.acquire("s", 1).block(TIMEOUT);
        assertThat(PostgresTestSupport.sql(factory, "SELECT count(*) AS n FROM pg_catalog.pg_attribute WHERE attrelid = '"
                + permits + "'::regclass AND attname = 'watched_until' AND NOT attisdropped").get(0).get("n")).isEqualTo(1L);
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiting = waiter.acquire("s", 1).subscribe(got::set);
        try {
            await().atMost(TIMEOUT).until(() -> ((Number) PostgresTestSupport.sql(factory, "SELECT count(*) AS n FROM "
                    + permits + " WHERE name = 's' AND watched_until > now()").get(0).get("n")).longValue() == 1);
            held.release().block(TIMEOUT);
            // the lease is 60 s and the backoff 10 min: only the release's notification wakes the waiter
            await().atMost(Duration.ofSeconds(8)).until(() -> got.get() != null);
            got.get().release().block(TIMEOUT);
        } finally {
            waiting.dispose();
        }
    }

    @Test
    void aCrashedClientsWatcherRowStopsCountingWhenItExpiresAndIsSwept() {
        LockClient locks = client(backend());
        String name = unique("crashed");
        // a client that observed the name (its listener registers the name and the observer key) and then vanished
        PostgresTestSupport.sql(factory, "SELECT " + SqlIdentifiers.qualified(SCHEMA, options.table() + "_watch")
                + "(ARRAY[$1, $2], 'crashed', 1500000) AS k", name, NotificationPayload.observerKey(name));
        Function<Void, List<String>> cycle = v -> heardUntilNow(() -> locks.acquire(name).flatMap(Lease::release).block(TIMEOUT));
        assertThat(cycle.apply(null)).hasSize(2); // counts while live
        await().atMost(TIMEOUT).until(() -> Boolean.TRUE.equals(PostgresTestSupport.sql(factory, "SELECT bool_and(expires_at <= now()) AS e FROM "
                + SqlIdentifiers.qualified(SCHEMA, options.table() + "_watchers") + " WHERE key IN ($1, $2)", name,
                NotificationPayload.observerKey(name)).get(0).get("e")));
        assertThat(cycle.apply(null)).isEmpty();
        // any client's registration or renewal sweeps expired rows
        PostgresLockBackend other = backend();
        String otherName = unique("other");
        StepVerifier.create(other.events(otherName).take(1)).expectNext(new LockEvent.Subscribed(otherName))
                .expectComplete().verify(TIMEOUT);
        assertThat(watcherRows(name)).isZero();
        assertThat(watcherRows(NotificationPayload.observerKey(name))).isZero();
    }
}
