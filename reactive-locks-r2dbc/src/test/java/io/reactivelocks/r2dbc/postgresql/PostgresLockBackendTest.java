package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.r2dbc.FencedWrites;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/** What the contract does not cover: the SQL, the listener, identifiers, schema handling, pools. */
class PostgresLockBackendTest {

    private static final String SCHEMA = "backend_test";
    private static final Duration LEASE = Duration.ofSeconds(30);

    private static PostgresServer pg;
    private static PostgresqlConnectionFactory factory;
    private static PostgresLockOptions options;

    private final List<PostgresLockBackend> backends = new ArrayList<>();
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        pg = PostgresTestSupport.shared();
        factory = PostgresTestSupport.factory(pg);
        options = PostgresLockOptions.builder().schema(SCHEMA).channel("backend_test_locks").poolMaxSize(4).build();
    }

    @AfterEach
    void closeAll() {
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

    private LockClient client(PostgresLockBackend backend, LockOptions o) {
        LockClient c = LockClient.create(backend, o);
        clients.add(c);
        return c;
    }

    private static GrantRequest grant(String name, String owner, Duration ttl) {
        return new GrantRequest(name, owner, ttl, false, LockClock.system());
    }

    private static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    private static List<Map<String, Object>> rows(String name) {
        return PostgresTestSupport.sql(factory, "SELECT owner, token, expires_at FROM "
                + SqlIdentifiers.qualified(SCHEMA, options.table()) + " WHERE name = $1", TextEscapes.encode(name));
    }

    /** The name's row if an owner left it (held, or expired and never released): a release frees the row, it stays. */
    private static List<Map<String, Object>> ownedRows(String name) {
        return PostgresTestSupport.sql(factory, "SELECT owner, token, expires_at FROM "
                + SqlIdentifiers.qualified(SCHEMA, options.table()) + " WHERE name = $1 AND owner <> ''", TextEscapes.encode(name));
    }

    // ---------------------------------------------------------------- statements

    @Test
    void aGrantTellsTheHolderInTheSameRoundTripAndARetryOfTheSameOwnerKeepsItsToken() {
        PostgresLockBackend b = backend();
        String name = unique("grant");
        Attempt first = b.tryGrant(grant(name, "owner-a", LEASE)).block(TIMEOUT);
        assertThat(first).isInstanceOf(Attempt.Granted.class);
        long token = ((Attempt.Granted) first).token();
        assertThat(((Attempt.Granted) first).ttl()).isEqualTo(LEASE);

        Attempt retried = b.tryGrant(grant(name, "owner-a", LEASE)).block(TIMEOUT);
        assertThat(retried).isEqualTo(Attempt.granted(token, LEASE));

        Attempt busy = b.tryGrant(grant(name, "owner-b", LEASE)).block(TIMEOUT);
        assertThat(busy).isInstanceOf(Attempt.Busy.class);
        var holder = ((Attempt.Busy) busy).holder();
        assertThat(holder).isNotNull();
        assertThat(holder.owner()).isEqualTo("owner-a");
        assertThat(holder.token()).isEqualTo(token);
        assertThat(holder.remaining()).isPositive().isLessThanOrEqualTo(LEASE);

        assertThat(b.release(name, "owner-b").block(TIMEOUT)).isFalse();
        assertThat(b.release(name, "owner-a").block(TIMEOUT)).isTrue();
        assertThat(b.release(name, "owner-a").block(TIMEOUT)).as("idempotent").isFalse();
        assertThat(ownedRows(name)).isEmpty();
        // the row stays, freed, and the name's next grant takes it with a greater token
        assertThat(rows(name)).hasSize(1);
        Attempt again = b.tryGrant(grant(name, "owner-c", LEASE)).block(TIMEOUT);
        assertThat(again).isInstanceOf(Attempt.Granted.class);
        assertThat(((Attempt.Granted) again).token()).isGreaterThan(token);
        assertThat(b.release(name, "owner-c").block(TIMEOUT)).isTrue();
    }

    @Test
    void answersComeOnlyOnceTheStatementHasCommitted() {
        PostgresLockBackend b = backend();
        PostgresLockBackend other = backend();
        for (int i = 0; i < 40; i++) {
            String name = unique("committed");
            Attempt a = b.tryGrant(grant(name, "o", LEASE)).block(TIMEOUT);
            assertThat(a).isInstanceOf(Attempt.Granted.class);
            // another connection sees the grant the moment the answer is in
            assertThat(other.inspect(name).block(TIMEOUT)).as("holder right after the grant, round %d", i).isNotNull();
            assertThat(b.release(name, "o").block(TIMEOUT)).isTrue();
            assertThat(other.inspect(name).blockOptional(TIMEOUT)).as("holder right after the release, round %d", i).isEmpty();
        }
    }

    @Test
    void anExpiredLeaseIsTakenOverWithAGreaterTokenAndCannotBeRenewed() {
        PostgresLockBackend b = backend();
        String name = unique("takeover");
        long t1 = ((Attempt.Granted) b.tryGrant(grant(name, "old", Duration.ofMillis(50))).block(TIMEOUT)).token();
        await().atMost(TIMEOUT).until(() -> b.inspect(name).blockOptional(TIMEOUT).isEmpty());
        // expired but not taken over yet: its owner cannot revive it
        assertThat(b.renew(List.of(new RenewRequest(new HeldLock(name, "old", t1), LEASE))).block(TIMEOUT))
                .containsExactly(RenewOutcome.notHeld());
        Attempt taken = b.tryGrant(grant(name, "new", LEASE)).block(TIMEOUT);
        assertThat(taken).isInstanceOf(Attempt.Granted.class);
        assertThat(((Attempt.Granted) taken).token()).isGreaterThan(t1);
        assertThat(b.release(name, "old").block(TIMEOUT)).as("the old owner's late release").isFalse();
        assertThat(b.inspect(name).block(TIMEOUT).owner()).isEqualTo("new");
        assertThat(b.release(name, "new").block(TIMEOUT)).isTrue();
    }

    @Test
    void aGrantDrawsItsTokenOnlyWhileHoldingThePerNameLock() {
        PostgresLockBackend b = backend();
        String name = unique("ordered");
        b.inspect(name).block(TIMEOUT); // schema exists
        String seq = SqlIdentifiers.qualified(SCHEMA, options.sequence());
        io.r2dbc.spi.Connection blocker = Mono.from(factory.create()).block(TIMEOUT);
        try {
            // another grant of the same name is "in progress": it holds the per-name transaction lock
            Mono.from(blocker.beginTransaction()).block(TIMEOUT);
            Flux.from(blocker.createStatement("SELECT pg_advisory_xact_lock(hashtextextended($1, 7305467431562270022))")
                    .bind(0, TextEscapes.encode(name)).execute()).concatMap(r -> r.getRowsUpdated()).blockLast(TIMEOUT);
            long drawnBefore = lastValue(seq);
            AtomicReference<Attempt> answer = new AtomicReference<>();
            Disposable pending = b.tryGrant(grant(name, "late", LEASE)).subscribe(answer::set);
            try {
                await().atMost(TIMEOUT).until(() -> !PostgresTestSupport.sql(factory,
                        "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").isEmpty());
                assertThat(lastValue(seq)).as("no token drawn while waiting").isEqualTo(drawnBefore);
                assertThat(answer.get()).isNull();
                // meanwhile another client gets a token (for another name): the waiting grant must exceed it
                long other = ((Attempt.Granted) b.tryGrant(grant(unique("other"), "x", Duration.ofMillis(1))).block(TIMEOUT)).token();
                Mono.from(blocker.commitTransaction()).block(TIMEOUT);
                await().atMost(TIMEOUT).until(() -> answer.get() != null);
                assertThat(((Attempt.Granted) answer.get()).token()).isGreaterThan(other);
            } finally {
                pending.dispose();
            }
        } finally {
            Mono.from(blocker.close()).block(TIMEOUT);
        }
        assertThat(b.release(name, "late").block(TIMEOUT)).isTrue();
    }

    private static long lastValue(String sequence) {
        return ((Number) PostgresTestSupport.sql(factory, "SELECT last_value FROM " + sequence).get(0).get("last_value")).longValue();
    }

    @Test
    void aRenewalBatchIsOneStatementWhoseOutcomesMapBackInOrder() {
        PostgresLockBackend b = backend();
        List<String> names = List.of(unique("batch-a"), unique("batch-b"), unique("batch-c"));
        List<Long> tokens = new ArrayList<>();
        for (String n : names) {
            tokens.add(((Attempt.Granted) b.tryGrant(grant(n, "me", Duration.ofSeconds(2))).block(TIMEOUT)).token());
        }
        List<RenewRequest> batch = List.of(
                new RenewRequest(new HeldLock(names.get(2), "me", tokens.get(2)), LEASE),
                new RenewRequest(new HeldLock(names.get(0), "someone-else", tokens.get(0)), LEASE),
                new RenewRequest(new HeldLock(names.get(0), "me", tokens.get(0)), LEASE),
                new RenewRequest(new HeldLock(names.get(1), "me", tokens.get(1) + 1000), LEASE),
                new RenewRequest(new HeldLock(unique("never-held"), "me", 1), LEASE),
                new RenewRequest(new HeldLock(names.get(1), "me", tokens.get(1)), Duration.ofSeconds(20)));
        assertThat(b.renew(batch).block(TIMEOUT)).containsExactly(
                RenewOutcome.renewed(LEASE), RenewOutcome.notHeld(), RenewOutcome.renewed(LEASE),
                RenewOutcome.notHeld(), RenewOutcome.notHeld(), RenewOutcome.renewed(Duration.ofSeconds(20)));
        assertThat(b.inspect(names.get(0)).block(TIMEOUT).remaining()).isGreaterThan(Duration.ofSeconds(25));
        assertThat(b.inspect(names.get(1)).block(TIMEOUT).remaining())
                .isGreaterThan(Duration.ofSeconds(15)).isLessThanOrEqualTo(Duration.ofSeconds(20));
        for (String n : names) {
            assertThat(b.release(n, "me").block(TIMEOUT)).isTrue();
        }
    }

    @Test
    void hostileNamesAndOwnersSurviveEveryStatementAndTheNotificationPayload() {
        PostgresLockBackend b = backend();
        PostgresLockBackend watcher = backend();
        String u = UUID.randomUUID().toString();
        List<String> hostile = List.of("nul\u0000" + u, "\\0" + u, "back\\slash" + u, "{\"array\",\"literal\"}" + u,
                "NULL", "null" + u, "a,b" + u, "'); DELETE FROM reactive_locks; --" + u, "lone \uD800 surrogate" + u,
                "low \uDC00 first" + u, "pair 🔒" + u, "  spaces  " + u, "tab\tnew\nline" + u, "%_*?" + u,
                "$1 $2" + u, "x".repeat(1000) + u.substring(0, 24), "\u0000".repeat(1024));
        assertThat(TextEscapes.encode("\u0000".repeat(1024)).getBytes(java.nio.charset.StandardCharsets.UTF_8)).hasSize(2048);
        String owner = "owner \u0000 \\ 'x' " + u;
        Map<String, ConcurrentLinkedQueue<LockEvent>> events = new java.util.HashMap<>();
        List<Disposable> subscriptions = new ArrayList<>();
        try {
            for (String n : hostile) {
                ConcurrentLinkedQueue<LockEvent> q = new ConcurrentLinkedQueue<>();
                events.put(n, q);
                subscriptions.add(watcher.events(n).subscribe(q::add));
            }
            await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(10))
                    .until(() -> hostile.stream().allMatch(n -> events.get(n).contains(new LockEvent.Subscribed(n))));
            List<Long> tokens = new ArrayList<>();
            for (String n : hostile) {
                Attempt a = b.tryGrant(grant(n, owner, LEASE)).block(TIMEOUT);
                assertThat(a).as("grant of %s", n).isInstanceOf(Attempt.Granted.class);
                tokens.add(((Attempt.Granted) a).token());
                assertThat(b.inspect(n).block(TIMEOUT).owner()).isEqualTo(owner);
            }
            List<RenewRequest> batch = new ArrayList<>();
            for (int i = 0; i < hostile.size(); i++) {
                batch.add(new RenewRequest(new HeldLock(hostile.get(i), owner, tokens.get(i)), LEASE));
            }
            assertThat(b.renew(batch).block(TIMEOUT)).hasSize(hostile.size()).allMatch(RenewOutcome::renewed);
            for (String n : hostile) {
                assertThat(b.release(n, owner).block(TIMEOUT)).as("release of %s", n).isTrue();
            }
            await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(10)).untilAsserted(() -> {
                for (int i = 0; i < hostile.size(); i++) {
                    String n = hostile.get(i);
                    assertThat(events.get(n)).as("events of %s", n).containsExactly(new LockEvent.Subscribed(n),
                            new LockEvent.Acquired(n, owner, tokens.get(i)), new LockEvent.Released(n, owner, false));
                }
            });
        } finally {
            subscriptions.forEach(Disposable::dispose);
        }
        assertThat(PostgresTestSupport.owned(factory, SCHEMA, options.table())).isZero();
    }

    // ---------------------------------------------------------------- notifications

    @Test
    void eventsStartWithSubscribedThenCarryOwnerAndTokenOfEachChange() {
        PostgresLockBackend holder = backend();
        CountingConnectionFactory listening = new CountingConnectionFactory(factory);
        PostgresLockBackend watcher = backend(options.mutate().listenerConnectionFactory(listening).build());
        String name = unique("events");
        String other = unique("other");
        AtomicReference<Long> token = new AtomicReference<>();
        AtomicReference<LockEvent> acquired = new AtomicReference<>();
        StepVerifier.create(watcher.events(name))
                .expectNext(new LockEvent.Subscribed(name))
                .then(() -> holder.tryGrant(grant(other, "x", LEASE)).block(TIMEOUT)) // another name: filtered out
                .then(() -> token.set(((Attempt.Granted) holder.tryGrant(grant(name, "a", LEASE)).block(TIMEOUT)).token()))
                .consumeNextWith(acquired::set) // may arrive before tryGrant's answer
                .then(() -> holder.release(name, "a").block(TIMEOUT))
                .expectNext(new LockEvent.Released(name, "a", false))
                .then(() -> holder.tryGrant(grant(name, "b", Duration.ofMillis(1))).block(TIMEOUT))
                .expectNextMatches(e -> e instanceof LockEvent.Acquired acq && "b".equals(acq.owner()))
                .then(() -> await().atMost(TIMEOUT).until(() -> holder.inspect(name).blockOptional(TIMEOUT).isEmpty()))
                .then(() -> holder.release(name, "b").block(TIMEOUT))
                .expectNext(new LockEvent.Released(name, "b", true))
                .thenCancel()
                .verify(TIMEOUT);
        assertThat(acquired.get()).isEqualTo(new LockEvent.Acquired(name, "a", token.get()));
        holder.release(other, "x").block(TIMEOUT);
        // a second subscriber of a live listener gets its own Subscribed at once; one connection serves both
        StepVerifier.create(watcher.events(name).take(1)).expectNext(new LockEvent.Subscribed(name)).expectComplete().verify(TIMEOUT);
        assertThat(listening.created()).as("listening connections opened").isEqualTo(1);
    }

    @Test
    void eventsCompleteWhenTheBackendCloses() {
        PostgresLockBackend watcher = PostgresLockBackend.create(factory, options);
        String name = unique("closing");
        StepVerifier.create(watcher.events(name))
                .expectNext(new LockEvent.Subscribed(name))
                .then(() -> watcher.close().block(TIMEOUT))
                .expectComplete()
                .verify(TIMEOUT);
        StepVerifier.create(watcher.events(name)).expectComplete().verify(TIMEOUT);
    }

    @Test
    void terminatingTheListeningConnectionReconnectsWaitersStillWakeAndObserveResumes() {
        String app = "listener-" + UUID.randomUUID().toString().substring(0, 8);
        PostgresqlConnectionFactory listenerFactory = new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                .host(pg.host()).port(pg.port()).username(pg.username()).password(pg.password()).database(pg.database())
                .applicationName(app).build());
        CountingConnectionFactory listening = new CountingConnectionFactory(listenerFactory);
        PostgresLockOptions slowReconnect = options.mutate().listenerConnectionFactory(listening)
                .reconnectBackoff(Duration.ofSeconds(1), Duration.ofSeconds(1)).build();
        // only a notification (or the re-check after a reconnect) can wake the waiter: 10-minute backoff, 60 s lease
        LockOptions slow = LockOptions.builder().leaseTime(Duration.ofSeconds(60))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        PostgresLockBackend waiterBackend = backend(slowReconnect);
        LockClient holder = client(backend(), slow);
        LockClient waiter = client(waiterBackend, slow);
        String name = unique("terminate");

        ConcurrentLinkedQueue<LockState> states = new ConcurrentLinkedQueue<>();
        Disposable observing = waiter.observe(name).subscribe(states::add);
        Lease first = holder.acquire(name).block(TIMEOUT);
        AtomicReference<Lease> got = new AtomicReference<>();
        Disposable waiting = waiter.acquire(name).subscribe(got::set);
        try {
            await().atMost(TIMEOUT).until(() -> states.stream().anyMatch(s -> s instanceof LockState.Held h
                    && h.token() == first.token()));
            awaitListening(waiterBackend, name);
            assertThat(listening.created()).as("listening connections opened").isEqualTo(1);

            // 1. kill the listening connection; release while nobody listens: that NOTIFY is lost
            assertThat(terminate(app)).isEqualTo(1);
            await().atMost(TIMEOUT).until(() -> sessions(app) == 0);
            first.release().block(TIMEOUT);
            // ... the reconnect's Subscribed makes the waiter and the observer re-check
            await().atMost(Duration.ofSeconds(8)).until(() -> got.get() != null);
            assertThat(got.get().token()).isGreaterThan(first.token());
            assertThat(listening.created()).as("listening connections opened").isEqualTo(2);
            assertThat(sessions(app)).as("listening sessions on the server").isEqualTo(1);
            await().atMost(TIMEOUT).until(() -> states.stream().anyMatch(s -> s instanceof LockState.Held h
                    && h.token() == got.get().token()));

            // 2. kill it again; after the reconnect, notifications flow as before
            Lease second = got.getAndSet(null);
            Disposable waitingAgain = holder.acquire(name).subscribe(got::set);
            try {
                assertThat(terminate(app)).isEqualTo(1);
                await().atMost(TIMEOUT).until(() -> listening.created() == 3);
                awaitListening(waiterBackend, name);
                assertThat(listening.created()).as("listening connections opened").isEqualTo(3);
                assertThat(sessions(app)).as("listening sessions on the server").isEqualTo(1);
                second.release().block(TIMEOUT);
                await().atMost(Duration.ofSeconds(5)).until(() -> got.get() != null);
                await().atMost(TIMEOUT).until(() -> states.stream().anyMatch(s -> s instanceof LockState.Held h
                        && h.token() == got.get().token()));
                got.get().release().block(TIMEOUT);
                await().atMost(TIMEOUT).until(() -> states.stream().reduce((x, y) -> y).orElseThrow() instanceof LockState.Free);
            } finally {
                waitingAgain.dispose();
            }
        } finally {
            waiting.dispose();
            observing.dispose();
        }
    }

    /**
     * Waits until the backend listens (through the SPI: a new subscriber's {@link LockEvent.Subscribed}
     * comes only once the LISTEN is active and the name's watcher row registered).
     */
    private static void awaitListening(PostgresLockBackend backend, String name) {
        StepVerifier.create(backend.events(name).take(1)).expectNext(new LockEvent.Subscribed(name)).expectComplete().verify(TIMEOUT);
    }

    /** @return how many server sessions have this application name (the listening connection's) */
    private static int sessions(String applicationName) {
        return PostgresTestSupport.sql(factory, "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
                applicationName).size();
    }

    private static int terminate(String applicationName) {
        return PostgresTestSupport.sql(factory, "SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity"
                + " WHERE application_name = $1", applicationName).size();
    }

    // ---------------------------------------------------------------- identifiers and schema

    @Test
    void identifiersThatAreNotPlainSqlIdentifiersAreRejectedNamingTheArgument() {
        List<String> bad = new ArrayList<>(List.of("", "1abc", "a-b", "a b", "a\"b", "a;b", "public; DROP TABLE x",
                "x\" ; DROP TABLE \"y", "a.b", "ä", "x".repeat(64), "a\u0000b", "$1", "a'b", "(select)", "a--"));
        for (String s : bad) {
            assertThatThrownBy(() -> PostgresLockOptions.builder().schema(s)).as("schema %s", s)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema");
            assertThatThrownBy(() -> PostgresLockOptions.builder().table(s)).hasMessageContaining("table");
            assertThatThrownBy(() -> PostgresLockOptions.builder().sequence(s)).hasMessageContaining("sequence");
            assertThatThrownBy(() -> PostgresLockOptions.builder().windowTable(s)).hasMessageContaining("windowTable");
            assertThatThrownBy(() -> PostgresLockOptions.builder().channel(s)).hasMessageContaining("channel");
            assertThatThrownBy(() -> FencedWrites.of(factory, s, "id")).hasMessageContaining("table");
            assertThatThrownBy(() -> FencedWrites.of(factory, "t", s)).hasMessageContaining("keyColumn");
            assertThatThrownBy(() -> FencedWrites.of(factory, "t", "id").in(s)).hasMessageContaining("schema");
            assertThatThrownBy(() -> FencedWrites.of(factory, "t", "id").fenceColumn(s)).hasMessageContaining("fenceColumn");
            assertThatThrownBy(() -> FencedWrites.of(factory, "t", "id").write("k", s, 1, 1)).hasMessageContaining("column");
        }
        assertThatThrownBy(() -> PostgresLockOptions.builder().schema(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("schema");
        assertThat(PostgresLockOptions.builder().schema("_Mixed_Case_9").table("x".repeat(63)).build().table()).hasSize(63);
        assertThatThrownBy(() -> PostgresLockOptions.builder().table("same").windowTable("same").build())
                .hasMessageContaining("windowTable");
    }

    @Test
    void migrateIsIdempotentAndSafeWhenManyProcessesRunItAtOnce() {
        String schema = "mig_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        PostgresLockOptions o = options.mutate().schema(schema).table("Locks_Mixed").createSchemaOnFirstUse(false).build();
        List<PostgresLockBackend> many = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            many.add(backend(o));
        }
        StepVerifier.create(Flux.merge(many.stream().map(PostgresLockBackend::migrate).toList()))
                .expectComplete().verify(TIMEOUT);
        StepVerifier.create(many.get(0).migrate()).expectComplete().verify(TIMEOUT);
        List<Map<String, Object>> objects = PostgresTestSupport.sql(factory,
                "SELECT c.relname AS name, c.relkind::text AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                        + " WHERE n.nspname = $1 ORDER BY 1", schema);
        assertThat(objects).extracting(m -> m.get("name")).containsExactly(
                "Locks_Mixed", "Locks_Mixed_pkey", "Locks_Mixed_watchers",
                "Locks_Mixed_watchers_pkey", "reactive_lock_windows",
                "reactive_lock_windows_pkey", "reactive_locks_token_seq");
        Attempt a = many.get(1).tryGrant(grant("m", "o", LEASE)).block(TIMEOUT);
        assertThat(a).isInstanceOf(Attempt.Granted.class);
        assertThat(many.get(2).release("m", "o").block(TIMEOUT)).isTrue();
    }

    @Test
    void theSchemaIsCreatedOnFirstUseUnlessDisabled() {
        String schema = "auto_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        PostgresLockBackend manual = backend(options.mutate().schema(schema).createSchemaOnFirstUse(false).build());
        StepVerifier.create(manual.inspect("x"))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("42P01") // undefined_table
                        .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).isFalse()))
                .verify(TIMEOUT);
        // several first operations at once: one creates, the others wait on its advisory lock
        PostgresLockBackend auto = backend(options.mutate().schema(schema).build());
        StepVerifier.create(Flux.merge(auto.inspect("x"), auto.inspect("y"), backend(options.mutate().schema(schema).build())
                        .tryGrant(grant("z", "o", LEASE)).then(Mono.empty())))
                .expectComplete().verify(TIMEOUT);
        StepVerifier.create(manual.release("z", "o")).expectNext(true).expectComplete().verify(TIMEOUT);
    }

    @Test
    void aLockTableOfAnOlderVersionGetsThePayloadColumnOnFirstUse() {
        String schema = "old_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        PostgresLockOptions o = options.mutate().schema(schema).build();
        // the lock table as versions without payloads created it
        PostgresTestSupport.sql(factory, "CREATE SCHEMA " + schema);
        PostgresTestSupport.sql(factory, "CREATE SEQUENCE " + schema + ".reactive_locks_token_seq AS bigint NO CYCLE");
        PostgresTestSupport.sql(factory, "CREATE TABLE " + schema + ".reactive_locks (name text NOT NULL, owner text NOT NULL,"
                + " token bigint NOT NULL, expires_at timestamptz NOT NULL, CONSTRAINT reactive_locks_pkey PRIMARY KEY (name))");
        PostgresTestSupport.sql(factory, "INSERT INTO " + schema + ".reactive_locks VALUES ('held', 'o1', 1, now() + interval '1 hour')");
        PostgresLockBackend b = backend(o);
        StepVerifier.create(b.inspect("held"))
                .assertNext(h -> assertThat(h).isEqualTo(new io.reactivelocks.spi.Holder("o1", 1, h.remaining(), null)))
                .expectComplete().verify(TIMEOUT);
        assertThat(b.updatePayload(new io.reactivelocks.spi.HeldLock("held", "o1", 1), "p").block(TIMEOUT)).isTrue();
        assertThat(b.inspect("held").block(TIMEOUT).payload()).isEqualTo("p");
        assertThat(b.release("held", "o1").block(TIMEOUT)).isTrue();
    }

    // ---------------------------------------------------------------- connections and clean-up

    @Test
    void anApplicationPoolIsUsedAsIsAndStaysOpenAfterClose() {
        ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(factory).maxSize(3).build());
        try {
            PostgresLockBackend b = PostgresLockBackend.create(pool, options);
            LockClient locks = LockClient.create(b, LockOptions.defaults());
            String name = unique("pool");
            StepVerifier.create(locks.withLock(name, lease -> Mono.just(lease.token()))).expectNextCount(1).expectComplete().verify(TIMEOUT);
            // the listener is not pooled: it unwraps the pool's factory
            StepVerifier.create(b.events(name).take(1)).expectNext(new LockEvent.Subscribed(name)).expectComplete().verify(TIMEOUT);
            locks.close().block(TIMEOUT);
            assertThat(pool.isDisposed()).isFalse();
            assertThat(PostgresTestSupport.sql(pool, "SELECT 1 AS one")).hasSize(1);
        } finally {
            pool.close().block(TIMEOUT);
        }
    }

    @Test
    void closeDeletesWhatThisBackendsOwnersLeftBehindAndPurgeDeletesExpiredRows() {
        PostgresLockBackend b = PostgresLockBackend.create(factory, options);
        String lost = unique("lost");
        String held = unique("held");
        b.tryGrant(grant(lost, "gone", Duration.ofMillis(1))).block(TIMEOUT);
        b.tryGrant(grant(held, "still", LEASE)).block(TIMEOUT);
        b.close().block(TIMEOUT);
        assertThat(ownedRows(lost)).isEmpty();
        assertThat(ownedRows(held)).isEmpty();

        PostgresLockBackend other = backend();
        String expired = unique("expired");
        String live = unique("live");
        other.tryGrant(grant(expired, "o", Duration.ofMillis(1))).block(TIMEOUT);
        other.tryGrant(grant(live, "o", LEASE)).block(TIMEOUT);
        await().atMost(TIMEOUT).until(() -> other.inspect(expired).blockOptional(TIMEOUT).isEmpty());
        other.purgeExpired(Duration.ofHours(1)).block(TIMEOUT); // deletes released rows of other tests, not these
        assertThat(rows(expired)).as("expired a moment ago: older than an hour it is not").hasSize(1);
        assertThat(other.purgeExpired(Duration.ZERO).block(TIMEOUT)).isGreaterThanOrEqualTo(1);
        assertThat(rows(expired)).isEmpty();
        assertThat(rows(live)).hasSize(1);
        assertThat(other.release(live, "o").block(TIMEOUT)).isTrue();
        // a released row is free: the purge deletes it
        assertThat(rows(live)).hasSize(1);
        assertThat(other.purgeExpired(Duration.ZERO).block(TIMEOUT)).isGreaterThanOrEqualTo(1);
        assertThat(rows(live)).isEmpty();
        assertThat(rows(lost)).isEmpty();
        assertThat(rows(held)).isEmpty();
    }

    @Test
    void everyBackendPurgesFreeRowsEveryTenMinutesFromItsFirstAcquireUntilItsClose() {
        VirtualTimeScheduler timers = VirtualTimeScheduler.create();
        PostgresLockBackend b = PostgresLockBackend.create(factory, options.mutate().scheduler(timers).build());
        try {
            String name = unique("janitor");
            String held = unique("janitor-held");
            assertThat(b.tryGrant(grant(name, "o", LEASE)).block(TIMEOUT)).isInstanceOf(Attempt.Granted.class);
            assertThat(b.tryGrant(grant(held, "o", LEASE)).block(TIMEOUT)).isInstanceOf(Attempt.Granted.class);
            assertThat(b.release(name, "o").block(TIMEOUT)).isTrue();
            timers.advanceTimeBy(PostgresLockBackend.PURGE_EVERY.minusSeconds(1));
            assertThat(rows(name)).as("freed, not purged yet").hasSize(1);
            timers.advanceTimeBy(Duration.ofSeconds(1));
            await().atMost(TIMEOUT).until(() -> rows(name).isEmpty());
            assertThat(rows(held)).as("a held lock's row stays").hasSize(1);
            assertThat(b.release(held, "o").block(TIMEOUT)).isTrue();
        } finally {
            b.close().block(TIMEOUT);
        }
        // closed: no purge any more
        String after = unique("janitor-after");
        PostgresLockBackend other = backend();
        assertThat(other.tryGrant(grant(after, "o", LEASE)).block(TIMEOUT)).isInstanceOf(Attempt.Granted.class);
        assertThat(other.release(after, "o").block(TIMEOUT)).isTrue();
        timers.advanceTimeBy(PostgresLockBackend.PURGE_EVERY.multipliedBy(2));
        assertThat(rows(after)).hasSize(1);
        timers.dispose();
    }

    @Test
    void everyOperationIsLazy() {
        PostgresLockBackend b = PostgresLockBackend.create(PostgresTestSupport.factory(pg, "nobody", "x", pg.host(), 1), options);
        // nothing is sent (nothing can fail) until subscribed
        b.tryGrant(grant("lazy", "o", LEASE));
        b.renew(List.of(new RenewRequest(new HeldLock("lazy", "o", 1), LEASE)));
        b.release("lazy", "o");
        b.inspect("lazy");
        b.events("lazy");
        b.migrate();
        b.purgeExpired(Duration.ZERO);
        StepVerifier.create(b.inspect("lazy"))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                        .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).as("connection refused").isTrue()))
                .verify(TIMEOUT);
        b.close().block(TIMEOUT);
    }
}
