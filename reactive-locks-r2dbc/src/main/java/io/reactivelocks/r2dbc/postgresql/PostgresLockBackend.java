package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Statement;
import io.reactivelocks.Concept;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.r2dbc.internal.BackendPool;
import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.r2dbc.internal.OutstandingRows;
import io.reactivelocks.r2dbc.internal.StoredForm;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The PostgreSQL {@link LockBackend} over R2DBC: one row per lock in a table, fencing tokens from
 * a sequence, expiry decided by the server's clock ({@code now()}), wake-ups and observation by
 * {@code LISTEN}/{@code NOTIFY}. Every operation is one statement on any pooled connection —
 * nothing depends on session state (no advisory locks, no open transactions), so it works
 * through r2dbc-pool, PgBouncer in transaction mode, and across failovers of the pool's
 * connections. The statements are resources next to this class ({@code acquire.sql},
 * {@code renew.sql}, {@code release.sql}, {@code inspect.sql}, {@code schema.sql}); their javadoc
 * there explains why each is correct under concurrency.
 *
 * <pre>{@code
 * ConnectionFactory pool = new ConnectionPool(ConnectionPoolConfiguration.builder(
 *         ConnectionFactories.get("r2dbc:postgresql://app:secret@db:5432/app")).maxSize(10).build());
 * PostgresLockBackend backend = PostgresLocks.backend(pool, PostgresLockOptions.defaults());
 * backend.migrate().block();                       // or let the first operation create the tables
 * LockClient locks = LockClient.create(backend, LockOptions.defaults());
 * }</pre>
 *
 * <p><b>Connections.</b> Statements use the factory given: an r2dbc-pool {@code ConnectionPool}
 * (or a factory wrapping one) is used as is and stays the application's; any other factory is
 * pooled by the backend itself ({@link PostgresLockOptions#poolMaxSize()}), and that pool is closed
 * by {@link #close()}. Notifications arrive on one dedicated, unpooled connection per backend
 * (the pool's underlying factory, or {@link PostgresLockOptions#listenerConnectionFactory()}),
 * opened by the first {@link #events} subscriber, reconnected with backoff after loss.
 *
 * <p><b>Names</b> are data: always bind parameters, stored as {@code text} with NUL, lone
 * surrogates and backslash escaped (PostgreSQL text cannot hold NUL), so any valid lock name works
 * and none collide.
 *
 * <p><b>Errors</b> are {@link LockBackendException}s; see {@code PostgresErrors} for which are
 * transient. Every method is lazy and non-blocking; cancelling a subscription returns its
 * connection to the pool (a statement already sent still completes on the server).
 */
public final class PostgresLockBackend implements LockBackend {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);
    private static final Duration CLOSE_SWEEP_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration CLOSE_POOL_TIMEOUT = Duration.ofSeconds(1);
    /** How often each backend purges free rows, and how long a lease must have ended before. */
    static final Duration PURGE_EVERY = Duration.ofMinutes(10);
    /** At most this many rows per purge statement ({@code purge.sql}). */
    private static final long PURGE_BATCH = 1000;
    /** The names remembered in {@link #lastGranted} before it starts over. */
    private static final int KNOWN_NAMES = 4096;

    private final ConnectionFactory connections;
    private final BackendPool backendPool;
    private final PostgresLockOptions options;
    private final NotificationListener listener;
    private final Mono<Void> schemaReady;
    private final Mono<Void> close;
    /** Lock rows this backend's owners may have left, in stored form: deleted owner-checked on close. */
    private final OutstandingRows outstanding = new OutstandingRows();
    /**
     * Names whose row this backend saw lately, and whether its last attempt on the name was
     * granted: then the next one sends {@code acquire_row.sql} (one UPDATE), else {@code acquire.sql}
     * (which also inserts a missing row and answers who holds a busy one). Bounded: cleared when full.
     */
    private final Map<String, Boolean> lastGranted = new ConcurrentHashMap<>();
    /** The periodic purge of free rows ({@link #PURGE_EVERY}), started by the first acquire. */
    private final Disposable.Swap janitor = Disposables.swap();
    private final AtomicBoolean janitorStarted = new AtomicBoolean();

    final String acquireSql;
    final String acquireRowSql;
    final String releaseSql;
    final String renewSql;
    final String inspectSql;
    final String updatePayloadSql;
    final String purgeSql;
    final String releaseOwnersSql;
    final String schemaSql;
    final String schemaCheckSql;
    final String windowClaimSql;
    final String schemaValidateSql;
    final String schemaPrivilegesSql;
    private final String unwatchAllSql;
    private final String waitingSql;
    /** The admin's name scan of the lock, permits and read-write tables, in {@link Concept} order. */
    private final String[] namesSql;
    /** This backend's id in the watchers table (its listener's rows). */
    private final String listenerId = java.util.UUID.randomUUID().toString();
    private final String[] schemaObjects;
    private final ExpectedSchema lockSchema;

    private PostgresLockBackend(ConnectionFactory factory, PostgresLockOptions options) {
        this.options = Objects.requireNonNull(options, "options");
        this.backendPool = BackendPool.of(factory, "reactive-locks", options.poolMaxSize(), options.connectTimeout());
        this.connections = backendPool.connections();
        Map<String, String> names = names(options);
        this.acquireSql = SqlScripts.render("acquire.sql", names, false);
        this.acquireRowSql = SqlScripts.render("acquire_row.sql", names, false);
        this.releaseSql = SqlScripts.render("release.sql", names, false);
        this.renewSql = SqlScripts.render("renew.sql", names, false);
        this.inspectSql = SqlScripts.render("inspect.sql", names, false);
        this.updatePayloadSql = SqlScripts.render("update_payload.sql", names, false);
        this.purgeSql = SqlScripts.render("purge.sql", names, false);
        this.releaseOwnersSql = SqlScripts.render("release_owners.sql", names, false);
        this.windowClaimSql = SqlScripts.render("window_claim.sql", names, false);
        this.schemaSql = schemaScript(names);
        this.unwatchAllSql = SqlScripts.render("unwatch_all.sql", names, false);
        this.waitingSql = SqlScripts.render("fair_waiting.sql", PostgresFairLockBackend.names(options), false);
        this.namesSql = new String[] {
            SqlScripts.render("admin_names.sql", Map.of("state_table", names.get("table")), false),
            SqlScripts.render("admin_names.sql", Map.of("state_table", PostgresSemaphoreStore.names(options).get("permit_table")), false),
            SqlScripts.render("admin_names.sql", Map.of("state_table", PostgresReadWriteStore.names(options).get("rw_table")), false),
            SqlScripts.render("admin_queues.sql", Map.of("task_table", PostgresTaskStore.names(options).get("task_table")), false)};
        this.schemaCheckSql = SqlScripts.render("schema_check.sql", names, false);
        this.schemaObjects = new String[] {names.get("table"), names.get("sequence"), names.get("window_table"),
                names.get("watcher_table"), names.get("notify_fn") + "(text,text,text)", names.get("watch_fn") + "(text[],text,bigint)"};

        this.schemaValidateSql = SqlScripts.render("schema_validate.sql", Map.of(), false);
        this.schemaPrivilegesSql = SqlScripts.render("schema_privileges.sql", Map.of(), false);
        this.lockSchema = ExpectedSchema.of(schemaSql);
        this.schemaReady = Mono.defer(() -> firstUse("lock", lockSchema, ensureSchema()))
                .cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
        ConnectionFactory listenerFactory = options.listenerConnectionFactory() != null
                ? options.listenerConnectionFactory() : BackendPool.unpooled(factory);
        this.listener = new NotificationListener(listenerFactory, options, listenerId,
                SqlScripts.render("watch.sql", names, false), SqlScripts.render("unwatch.sql", names, false), schemaReady);
        this.close = Mono.defer(this::doClose).cache();
    }

    /**
     * Creates a backend with {@link PostgresLockOptions#defaults()}. Nothing connects before the
     * first operation is subscribed.
     *
     * @param factory an r2dbc-postgresql connection factory, ideally an r2dbc-pool {@code ConnectionPool}
     * @return the backend; close it (or the {@code LockClient} over it) when done
     */
    public static PostgresLockBackend create(ConnectionFactory factory) {
        return create(factory, PostgresLockOptions.defaults());
    }

    /**
     * Creates a backend. Nothing connects before the first operation is subscribed.
     *
     * @param factory an r2dbc-postgresql connection factory, ideally an r2dbc-pool {@code ConnectionPool}
     * @param options tables, channel, schema creation, pool and listener settings
     * @return the backend; close it (or the {@code LockClient} over it) when done
     */
    public static PostgresLockBackend create(ConnectionFactory factory, PostgresLockOptions options) {
        return new PostgresLockBackend(factory, options);
    }

    /** @return the options of this backend */
    public PostgresLockOptions options() {
        return options;
    }

    /**
     * Creates the schema, sequence, tables and indexes if missing ({@code schema.sql}): idempotent
     * and safe to run from many processes at once (serialized by a transaction-scoped advisory
     * lock). Needs the privileges to create them. On subscribe it runs once; cancel returns the
     * connection; errors are {@link LockBackendException} (not transient for missing privileges).
     *
     * @return a {@code Mono} that completes when the schema exists
     */
    public Mono<Void> migrate() {
        return runScript(schemaSql).onErrorMap(e -> PostgresErrors.map(null, "migrate", e));
    }

    /**
     * Checks that every object of the whole store exists — the lock, window and watchers tables,
     * the sequence, and the tables, indexes and functions of the fair lock, semaphore, read-write
     * lock, task queue and fenced values, with the configured names ({@code docs/ddl/postgresql.sql}
     * creates them with the default ones) — whatever the {@link PostgresLockOptions#schemaMode()}. Creates nothing and
     * reads only the catalogs. Lazy: each subscription checks once.
     *
     * <p>When every object exists it checks that this role may use them: {@code USAGE} on the
     * schema, {@code SELECT}, {@code INSERT}, {@code UPDATE} and {@code DELETE} on each table,
     * {@code USAGE} (or {@code UPDATE}) on the sequence, {@code EXECUTE} on each function.
     *
     * @return a {@code Mono} that completes when nothing is missing; else errors with a
     *         {@link PostgresSchemaException} naming each missing object or privilege (or a
     *         {@link LockBackendException} when the server cannot be asked)
     */
    public Mono<Void> validateSchema() {
        return Mono.defer(() -> StoreSchema.expected(options).check(this))
                .onErrorMap(e -> PostgresErrors.map(null, "schema validation", e));
    }

    /**
     * Deletes free rows ({@code purge.sql}): of locks whose lease ended at least {@code olderThan}
     * ago by the server's clock, released locks (a release frees its row and leaves it, so that the
     * name's next grant is one {@code UPDATE}), and placeholders of names nobody watches any more.
     * Such rows hold nothing. Every backend runs it every 10 minutes with an age of 10 minutes,
     * from its first acquire until its close; call it for more. Each name's row is deleted under
     * the name's advisory lock (a name being inserted right then keeps its row), 1,000 rows per
     * statement. Each purged lock that expired without a release is announced to waiters.
     * Lazy; errors are {@link LockBackendException}.
     *
     * @param olderThan how long ago the lease must have ended; zero or positive
     * @return the number of rows deleted
     */
    public Mono<Long> purgeExpired(Duration olderThan) {
        Objects.requireNonNull(olderThan, "olderThan");
        if (olderThan.isNegative()) {
            throw new IllegalArgumentException("olderThan must not be negative, was " + olderThan);
        }
        long us = TimeUnit.MICROSECONDS.convert(olderThan);
        // batches of PURGE_BATCH candidates, repeated while a batch was full
        Mono<long[]> batch = firstOfAll(withSchema(query(purgeSql, st -> st.bind(0, us).bind(1, options.channel()),
                (row, md) -> new long[] {row.get("purged", Long.class), row.get("candidates", Long.class)})))
                .defaultIfEmpty(new long[2]);
        return batch.expand(b -> b[1] >= PURGE_BATCH && b[0] > 0 ? batch : Mono.empty())
                .reduce(0L, (sum, b) -> sum + b[0])
                .onErrorMap(e -> PostgresErrors.map(null, "purge", e));
    }

    // ------------------------------------------------------------------ LockBackend

    /** @return {@code "postgresql"} */
    @Override
    public String name() {
        return PostgresErrors.BACKEND;
    }

    /**
     * {@inheritDoc}
     *
     * <p>One statement: when this backend's last attempt on the name was granted, one
     * {@code UPDATE} of the name's row ({@code acquire_row.sql}: take it when free, or grant again
     * to the same owner); else, or when that found the row busy or gone, {@code acquire.sql}, which
     * also inserts a missing row and answers the holder of a busy one in the same round trip. A
     * release leaves the row (freed), so a name's next grant is that one {@code UPDATE}. The answer is
     * emitted only after the statement committed. Subscribing sends it; cancelling returns the
     * connection but cannot recall a statement already sent (the engine releases such grants).
     */
    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.defer(() -> {
            String name = TextEscapes.encode(request.name());
            String owner = TextEscapes.encode(request.owner());
            long ttlUs = Micros.of(request.leaseTime());
            outstanding.asking(name, owner);
            startJanitor();
            Consumer<Statement> binds = st -> st
                    .bind(0, name).bind(1, owner).bind(2, ttlUs).bind(3, options.channel())
                    .bind(4, NotificationPayload.suffix(owner, name))
                    .bind(5, storedPayload(request.payload()));
            Mono<Attempt> full = firstOfAll(query(acquireSql, binds, (row, md) -> toAttempt(row, request)))
                    .defaultIfEmpty(Attempt.busy(null)); // the holder committed after our snapshot
            Mono<Attempt> ask = Boolean.TRUE.equals(lastGranted.get(name))
                    ? firstOfAll(query(acquireRowSql, binds, (row, md) -> toAttempt(row, request))).switchIfEmpty(full)
                    : full;
            return withSchema(ask.flux()).next()
                    .doOnNext(a -> {
                        boolean granted = a instanceof Attempt.Granted;
                        if (lastGranted.size() >= KNOWN_NAMES && !lastGranted.containsKey(name)) {
                            lastGranted.clear();
                        }
                        lastGranted.put(name, granted);
                        // busy: this owner has no row (it would have been granted)
                        outstanding.answered(name, owner, !(a instanceof Attempt.Busy));
                    })
                    .onErrorMap(e -> PostgresErrors.map(request.name(), "acquire", e));
        });
    }

    /** Starts the periodic purge of free rows ({@code purge.sql}) once; errors wait for the next run. */
    private void startJanitor() {
        if (!janitorStarted.get() && janitorStarted.compareAndSet(false, true)) {
            janitor.update(Flux.interval(PURGE_EVERY, PURGE_EVERY, options.scheduler())
                    .onBackpressureDrop()
                    .concatMap(t -> purgeExpired(PURGE_EVERY).onErrorResume(e -> Mono.empty()), 1)
                    .subscribe());
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>One statement for the whole batch ({@code renew.sql}, the leases passed as arrays and
     * joined with {@code unnest}); a lease is renewed only if its row still has the same owner and
     * token and has not expired by the server's clock.
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        Objects.requireNonNull(batch, "batch");
        return Mono.defer(() -> {
            int n = batch.size();
            RenewArrays arrays = RenewArrays.of(batch);
            return withSchema(query(renewSql, arrays::bind, (row, md) -> RenewArrays.renewed(row)))
                    .collect(Collectors.toSet())
                    .map(arrays::outcomes)
                    .onErrorMap(e -> PostgresErrors.map(n == 1 ? batch.get(0).lock().name() : null, "renewal", e));
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@code UPDATE ... WHERE name = $1 AND owner = $2} ({@code release.sql}: the row stays,
     * freed, for the name's next grant), announced to waiters by {@code pg_notify} when a row was
     * freed and a client watches the name; answered after the commit.
     */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return Mono.defer(() -> {
            String n = TextEscapes.encode(name);
            String o = TextEscapes.encode(owner);
            return withSchema(query(releaseSql, st -> st.bind(0, n).bind(1, o).bind(2, options.channel())
                            .bind(3, NotificationPayload.suffix(o, n)),
                    (row, md) -> row.get("token", Long.class)))
                    .count() // the whole result: the DELETE is committed when it ends
                    .map(deleted -> deleted > 0)
                    .doOnNext(deleted -> {
                        outstanding.released(n, o, deleted);
                    })
                    .onErrorMap(e -> PostgresErrors.map(name, "release", e));
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>Reads the row ({@code inspect.sql}); an expired row counts as free. The remaining TTL is
     * computed by the server's clock.
     */
    @Override
    public Mono<Holder> inspect(String name) {
        Objects.requireNonNull(name, "name");
        return Mono.defer(() -> {
            String n = TextEscapes.encode(name);
            return firstOfAll(withSchema(query(inspectSql, st -> st.bind(0, n),
                    (row, md) -> new Holder(TextEscapes.decode(row.get("owner", String.class)), row.get("token", Long.class),
                            Duration.ofNanos(row.get("remaining_us", Long.class) * 1000), payloadOf(row)))))
                    .onErrorMap(e -> PostgresErrors.map(name, "inspect", e));
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@code UPDATE ... WHERE name, owner and token match and the row has not expired}
     * ({@code update_payload.sql}), announced like a grant; answered after the commit.
     */
    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, String payload) {
        Objects.requireNonNull(lock, "lock");
        return Mono.defer(() -> {
            String n = TextEscapes.encode(lock.name());
            String o = TextEscapes.encode(lock.owner());
            return withSchema(query(updatePayloadSql, st -> st.bind(0, n).bind(1, o).bind(2, lock.token())
                            .bind(3, storedPayload(payload)).bind(4, options.channel())
                            .bind(5, NotificationPayload.suffix(o, n)),
                    (row, md) -> row.get("token", Long.class)))
                    .count() // the whole result: the UPDATE is committed when it ends
                    .map(updated -> updated > 0)
                    .onErrorMap(e -> PostgresErrors.map(lock.name(), "payload update", e));
        });
    }

    /** A payload in stored form; {@code Parameters.in} types a NULL as text. */
    static Object storedPayload(String payload) {
        return payload == null ? io.r2dbc.spi.Parameters.in(io.r2dbc.spi.R2dbcType.VARCHAR) : TextEscapes.encode(payload);
    }

    private static String payloadOf(Row row) {
        String p = row.get("payload", String.class);
        return p == null ? null : TextEscapes.decode(p);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The live rows of the fair lock's waiters table ({@code fair_waiting.sql}); {@code -1} when
     * there is none, or no fair lock was ever used (the table does not exist).
     */
    @Override
    public Mono<Integer> waiting(String name) {
        Objects.requireNonNull(name, "name");
        return Mono.defer(() -> firstOfAll(query(waitingSql, st -> st.bind(0, TextEscapes.encode(name)),
                        (row, md) -> row.get("waiting", Long.class)))
                .map(n -> n == null || n == 0 ? -1 : (int) Math.min(Integer.MAX_VALUE, n))
                .defaultIfEmpty(-1)
                .onErrorResume(PostgresLockBackend::undefinedTable, e -> Mono.just(-1))
                .onErrorMap(e -> PostgresErrors.map(name, "waiting count", e)));
    }

    /**
     * A revocation request: {@code SELECT pg_notify(channel, payload)} on a pooled connection (see
     * {@link NotificationPayload#revocation}); the holder listening to the name receives it.
     */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        Objects.requireNonNull(name, "name");
        return notifyRevocation(name, TextEscapes.encode(name), owner, reason);
    }

    /**
     * A revocation request under a dispatch key: the lock's stored name, or a semaphore's or a
     * read-write lock's key ({@code SELECT pg_notify(channel, payload)}).
     */
    Mono<Void> notifyRevocation(String name, String dispatchKey, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        return Mono.defer(() -> query("SELECT pg_notify($1, $2) AS sent", st -> st.bind(0, options.channel()).bind(1,
                        NotificationPayload.revocation(TextEscapes.encode(owner), TextEscapes.encode(reason), dispatchKey)),
                        (row, md) -> Boolean.TRUE)
                .then()
                .onErrorMap(e -> PostgresErrors.map(name, "revocation request", e)));
    }

    /**
     * The names with live rows in the lock, permits and read-write tables, and the queues with live
     * claims in the task table ({@code admin_queues.sql}), that start with
     * {@code prefix} ({@code admin_names.sql}: a literal {@code left(name, length($1)) = $1}, never
     * {@code LIKE}), one statement per table; a table that was never created holds nothing.
     *
     * @param prefix the start of the names
     * @return each (concept, name) once
     */
    Flux<NameScan.Named> scanNames(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        return Flux.defer(() -> {
            String stored = TextEscapes.encode(StoredForm.scanPrefix(prefix));
            Concept[] concepts = {Concept.LOCK, Concept.SEMAPHORE, Concept.READ_WRITE_LOCK, Concept.TASK_QUEUE};
            return Flux.range(0, concepts.length).concatMap(i -> query(namesSql[i], st -> st.bind(0, stored),
                            (row, md) -> new NameScan.Named(concepts[i], TextEscapes.decode(row.get("name", String.class))))
                    .onErrorResume(PostgresLockBackend::undefinedTable, e -> Flux.empty()));
        }).onErrorMap(e -> PostgresErrors.map(null, "name scan", e));
    }

    /** @return whether {@code e} is SQLSTATE 42P01: the table does not exist (the concept was never used) */
    private static boolean undefinedTable(Throwable e) {
        return "42P01".equals(PostgresErrors.sqlState(e));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Shares the backend's one listening connection: the first subscriber opens it.
     * {@link LockEvent.Subscribed} comes once the {@code LISTEN} is active and the name is
     * registered in the watchers table (the statements notify a name only while a client watches
     * it), and again after each reconnect; the last subscriber of a name leaving deletes the row. The stream completes when the backend closes, and errors with a non-transient
     * {@link LockBackendException} when the listening connection cannot be established for good
     * (authentication, missing database); transient losses only reconnect.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        Objects.requireNonNull(name, "name");
        return Flux.defer(() -> listener.events(name, TextEscapes.encode(name), NotificationListener.Watch.GRANTS));
    }

    /**
     * As {@link #events}, without the grants: a waiter's subscription registers the name for its
     * releases only, so that a handoff's grant sends no {@code NOTIFY} unless someone observes the
     * name (each {@code NOTIFY} serializes its transaction's commit with every other notifying one).
     */
    @Override
    public Flux<LockEvent> wakeUps(String name) {
        Objects.requireNonNull(name, "name");
        return Flux.defer(() -> listener.events(name, TextEscapes.encode(name), NotificationListener.Watch.CHANGES));
    }

    /** @return {@code true}: {@link #wakeUps} registers no observer, and grants are announced to observers only */
    @Override
    public boolean wakeUpsOmitGrants() {
        return true;
    }

    /**
     * Closes the listening connection, deletes (owner-checked) whatever rows this backend's
     * owners may have left — leases that were lost and never released, grants whose answer never
     * arrived — and closes the pool if the backend created it. Bounded (about 3 s when the server
     * does not answer) and idempotent; errors of the clean-up are ignored (such rows expire by
     * their TTL).
     *
     * @return a {@code Mono} that closes on subscribe
     */
    @Override
    public Mono<Void> close() {
        return close;
    }

    // ------------------------------------------------------------------ internals

    /**
     * The wake-ups of a task queue ({@link PostgresTaskQueue}) on the backend's one listening
     * connection: {@link LockEvent.Released} when tasks became capturable, {@link LockEvent.Subscribed}
     * after each (re)connect. Completes when the backend closes.
     */
    Flux<LockEvent> queueEvents(String queue) {
        return Flux.defer(() -> listener.events(queue, NotificationPayload.queueKey(TextEscapes.encode(queue)), NotificationListener.Watch.NONE));
    }

    /**
     * The events of a semaphore ({@link PostgresSemaphoreStore}) or read-write lock
     * ({@link PostgresReadWriteStore}) on the backend's one listening connection, dispatched under
     * {@code key}; {@link LockEvent.Subscribed} after each (re)connect. With {@code grants} the
     * subscription registers the name's observer key too: its grant function announces grants only
     * while such a key is registered (waiters need the releases only).
     */
    Flux<LockEvent> semaphoreEvents(String semaphore, String key, boolean grants) {
        return Flux.defer(() -> listener.events(semaphore, key,
                grants ? NotificationListener.Watch.GRANTS : NotificationListener.Watch.CHANGES));
    }

    /** Runs {@code sql} (one statement with bind parameters) on a pooled connection, returned on any end. */
    <T> Flux<T> query(String sql, Consumer<Statement> binder, BiFunction<Row, RowMetadata, T> mapper) {
        return Flux.usingWhen(connections.create(), c -> {
            Statement st = c.createStatement(sql);
            binder.accept(st);
            return Flux.from(st.execute()).concatMap(r -> r.map(mapper));
        }, Connection::close);
    }

    /**
     * The first row of a statement's result, emitted only once the whole result was read. Never
     * {@code next()}: PostgreSQL sends rows before the statement's implicit transaction commits
     * (the commit comes with ReadyForQuery, which ends the result), so answering on the first row
     * would report a grant or release that is not committed yet — and may never be.
     */
    static <T> Mono<T> firstOfAll(Flux<T> rows) {
        return rows.collectList().flatMap(all -> all.isEmpty() ? Mono.empty() : Mono.just(all.get(0)));
    }

    /** Prefixes {@code work} with the first-use schema step (nothing in {@link SchemaMode#NONE}). */
    <T> Flux<T> withSchema(Flux<T> work) {
        return schemaReady.thenMany(work);
    }

    /**
     * The first-use step of one concept under {@link PostgresLockOptions#schemaMode()}: create what
     * is missing, check that nothing is, or nothing.
     *
     * @param concept  the concept, for messages (e.g. "semaphore")
     * @param expected the objects it needs
     * @param create   checks and creates what is missing
     * @return the step; a refusal to create (SQLSTATE 42501) becomes a {@link PostgresSchemaException}
     */
    Mono<Void> firstUse(String concept, ExpectedSchema expected, Mono<Void> create) {
        return switch (options.schemaMode()) {
            case CREATE -> create.onErrorMap(e -> "42501".equals(PostgresErrors.sqlState(e))
                    ? PostgresSchemaException.creationRefused(concept, e, "[42501] " + String.valueOf(e.getMessage()).replace("[42501] ", ""))
                    : e);
            case VALIDATE -> expected.check(this);
            case NONE -> Mono.empty();
        };
    }

    /**
     * @param options the schema, lock, window table and sequence
     * @return the placeholder values of the lock scripts
     */
    static Map<String, String> names(PostgresLockOptions options) {
        Map<String, String> names = new HashMap<>();
        names.put("schema", SqlIdentifiers.quote(options.schema()));
        names.put("schema_name", options.schema());
        names.put("table", SqlIdentifiers.qualified(options.schema(), options.table()));
        names.put("sequence", SqlIdentifiers.qualified(options.schema(), options.sequence()));
        names.put("window_table", SqlIdentifiers.qualified(options.schema(), options.windowTable()));
        names.put("table_pkey", SqlIdentifiers.quote(SqlIdentifiers.derived(options.table(), "_pkey")));
        names.put("expires_index", SqlIdentifiers.quote(SqlIdentifiers.derived(options.table(), "_expires_at_idx")));
        names.put("window_pkey", SqlIdentifiers.quote(SqlIdentifiers.derived(options.windowTable(), "_pkey")));
        watcherNames(options, names);
        return names;
    }

    /**
     * @param names the placeholder values of {@link #names}
     * @return the lock schema script: {@code schema.sql}, then {@code watchers_schema.sql}
     */
    static String schemaScript(Map<String, String> names) {
        return SqlScripts.render("schema.sql", names, true) + "\n\n" + SqlScripts.render("watchers_schema.sql", names, true);
    }

    /**
     * Puts the names of the watchers table and its functions ({@code watchers_schema.sql}) into a
     * statement's placeholder values: every statement that notifies calls {@code ${notify_fn}}.
     *
     * @param options the schema and lock table the names derive from
     * @param names   the placeholder values to add to
     */
    static void watcherNames(PostgresLockOptions options, Map<String, String> names) {
        String watchers = SqlIdentifiers.derived(options.table(), "_watchers");
        names.put("watcher_table", SqlIdentifiers.qualified(options.schema(), watchers));
        names.put("watcher_pkey", SqlIdentifiers.quote(SqlIdentifiers.derived(watchers, "_pkey")));
        names.put("notify_fn", SqlIdentifiers.qualified(options.schema(), SqlIdentifiers.derived(options.table(), "_notify")));
        names.put("watch_fn", SqlIdentifiers.qualified(options.schema(), SqlIdentifiers.derived(options.table(), "_watch")));
        names.put("unwatch_fn", SqlIdentifiers.qualified(options.schema(), SqlIdentifiers.derived(options.table(), "_unwatch")));
        // the semaphores' and read-write locks' tables, whose rows the watch functions mark (their own scripts create them)
        names.put("watched_permit_table", SqlIdentifiers.qualified(options.schema(), SqlIdentifiers.derived(options.table(), "_permits")));
        names.put("watched_rw_table", SqlIdentifiers.qualified(options.schema(), SqlIdentifiers.derived(options.table(), "_rw")));
    }

    /** @return the first-use schema step (lock table, watchers), cached once it succeeded */
    Mono<Void> schemaReady() {
        return schemaReady;
    }

    private Mono<Void> ensureSchema() {
        return query(schemaCheckSql, st -> st.bind(0, schemaObjects[0]).bind(1, schemaObjects[1]).bind(2, schemaObjects[2])
                        .bind(3, schemaObjects[3]).bind(4, schemaObjects[4]).bind(5, schemaObjects[5]),
                (row, md) -> Boolean.TRUE.equals(row.get("ready", Boolean.class)))
                .reduce(Boolean::logicalAnd)
                .defaultIfEmpty(false)
                .flatMap(ready -> ready ? Mono.<Void>empty() : runScript(schemaSql));
    }

    /** Runs a script of several statements without parameters (simple query: one implicit transaction). */
    Mono<Void> runScript(String script) {
        return Flux.usingWhen(connections.create(),
                c -> Flux.from(c.createStatement(script).execute()).concatMap(r -> r.getRowsUpdated()),
                Connection::close).then();
    }

    private Attempt toAttempt(Row row, GrantRequest request) {
        long token = row.get("token", Long.class);
        if (Boolean.TRUE.equals(row.get("granted", Boolean.class))) {
            return Attempt.granted(token, request.leaseTime());
        }
        Long remainingUs = row.get("remaining_us", Long.class);
        return Attempt.busy(new Holder(TextEscapes.decode(row.get("owner", String.class)), token,
                Micros.remaining(remainingUs == null ? 0 : remainingUs), payloadOf(row)));
    }

    private Mono<Void> doClose() {
        janitorStarted.set(true);
        janitor.dispose();
        List<OutstandingRows.Row> left = outstanding.drain();
        Mono<Void> sweep = left.isEmpty() ? Mono.empty() : query(releaseOwnersSql, st -> st
                        .bind(0, left.stream().map(OutstandingRows.Row::name).toArray(String[]::new))
                        .bind(1, left.stream().map(OutstandingRows.Row::owner).toArray(String[]::new))
                        .bind(2, options.channel()),
                (row, md) -> row.get("released", Long.class))
                .then()
                .timeout(CLOSE_SWEEP_TIMEOUT, options.scheduler())
                .onErrorResume(e -> Mono.empty());
        // the pool's disposal goes on in the background if it takes longer than we wait for it
        Mono<Void> pool = backendPool.close(CLOSE_POOL_TIMEOUT, options.scheduler());
        // this client's watcher rows: nobody here waits any more (else they expire by their TTL)
        Mono<Void> unwatch = query(unwatchAllSql, st -> st.bind(0, listenerId), (row, md) -> 1)
                .then()
                .timeout(CLOSE_SWEEP_TIMEOUT, options.scheduler())
                .onErrorResume(e -> Mono.empty());
        return listener.close().then(listener.startedEver() ? unwatch : Mono.empty()).then(sweep).then(pool);
    }

    @Override
    public String toString() {
        return "PostgresLockBackend{" + options + "}";
    }
}
