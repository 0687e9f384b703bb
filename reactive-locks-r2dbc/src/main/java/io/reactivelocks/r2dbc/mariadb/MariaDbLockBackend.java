package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Statement;
import io.reactivelocks.Concept;
import io.reactivelocks.LockBackendException;
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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * The MariaDB {@link LockBackend} over R2DBC: one row per lock in an InnoDB table, fencing tokens
 * from a {@code SEQUENCE} drawn while the name's row is locked, expiry decided by the server's clock
 * ({@code UTC_TIMESTAMP(6)}), wake-ups by a poller of the names waited for ({@link NamePoller}) and,
 * for releases through this backend, at once. A grant is one statement on a pooled connection
 * ({@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING}: lock the name's row, take it or leave
 * it, answer with it); renewal, release, inspection and payload updates are single statements too.
 * Nothing depends on
 * session state between operations, so it works through any pool.
 *
 * <pre>{@code
 * ConnectionFactory db = ConnectionFactories.get("r2dbc:mariadb://app:secret@db:3306/app");
 * MariaDbLockBackend backend = MariaDbLocks.backend(db, MariaDbLockOptions.defaults());
 * backend.migrate().block();                      // or let the first operation create the tables
 * LockClient locks = LockClient.create(backend, LockOptions.defaults());
 * }</pre>
 *
 * <p><b>Connections.</b> An r2dbc-pool {@code ConnectionPool} (or a factory wrapping one) is used as
 * is and stays the application's; any other factory is pooled by the backend
 * ({@link MariaDbLockOptions#poolMaxSize()}), and that pool is closed by {@link #close()}.
 *
 * <p><b>Names</b> are data: always bound, stored in binary columns (see {@code StoredText}), so any
 * valid lock name works and none collide. <b>Errors</b> are {@link LockBackendException}s; see
 * {@code MariaDbErrors} for which are transient. Every method is lazy and non-blocking.
 */
public final class MariaDbLockBackend implements LockBackend {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);
    private static final Duration CLOSE_SWEEP_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration CLOSE_POOL_TIMEOUT = Duration.ofSeconds(1);
    /** A grant whose transaction was chosen as a deadlock victim is repeated at once, this often. */
    private static final int ROLLED_BACK_RETRIES = 3;

    private final ConnectionFactory connections;
    private final BackendPool backendPool;
    private final MariaDbLockOptions options;
    private final NamePoller poller;
    private final SchemaSteps schema;
    private final Mono<Void> schemaReady;
    private final Mono<Void> close;
    /** Lock rows this backend's owners may have left, by stored name: deleted owner-checked on close. */
    private final OutstandingRows outstanding = new OutstandingRows();

    private final Map<String, String> names;
    private final String acquireSql;
    private final RenewBatch renewals;
    private final String releaseSql;
    private final String inspectSql;
    private final String updatePayloadSql;
    private final String heldBySql;
    /** The admin's name scan of the lock, permits and read-write tables and the task table, in that order. */
    private final String[] namesSql;
    private final String waitingSql;
    private final String revokeSql;
    private final String revokePurgeSql;
    private final List<String> schemaStatements;

    private MariaDbLockBackend(ConnectionFactory factory, MariaDbLockOptions options) {
        this.options = Objects.requireNonNull(options, "options");
        this.backendPool = BackendPool.of(factory, "reactive-locks-mariadb", options.poolMaxSize(), options.connectTimeout());
        this.connections = backendPool.connections();
        this.names = names(options);
        this.acquireSql = MariaDbSql.render("acquire.sql", names);
        this.renewals = new RenewBatch(MariaDbSql.render("renew.sql", names));
        this.releaseSql = MariaDbSql.render("release.sql", names);
        this.inspectSql = MariaDbSql.render("inspect.sql", names);
        this.updatePayloadSql = MariaDbSql.render("update_payload.sql", names);
        this.heldBySql = MariaDbSql.render("held_by.sql", names);
        this.namesSql = new String[] {
            MariaDbSql.render("admin_names.sql", Map.of("state_table", names.get("table"))),
            MariaDbSql.render("admin_names.sql", Map.of("state_table", MariaDbSql.qualified(options.database(),
                    MariaDbSemaphoreStore.tableName(options)))),
            MariaDbSql.render("admin_names.sql", Map.of("state_table", MariaDbSql.qualified(options.database(),
                    MariaDbReadWriteStore.tableName(options)))),
            MariaDbSql.render("admin_queues.sql", Map.of("task_table", MariaDbSql.qualified(options.database(),
                    MariaDbTaskStore.tableName(options))))};
        this.schemaStatements = MariaDbSql.statements("schema.sql", names);
        this.revokeSql = MariaDbSql.render("revoke.sql", names);
        this.revokePurgeSql = MariaDbSql.render("revoke_purge.sql", names);
        this.waitingSql = MariaDbSql.render("fair_waiting.sql", MariaDbFairLockBackend.names(options));
        this.schema = new SchemaSteps(this);
        this.schemaReady = Mono.defer(this::firstUse).cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
        this.poller = new NamePoller(options.pollInterval(), options.scheduler(), this::poll, revocationReader("l"), true);
        this.close = Mono.defer(this::doClose).cache();
    }

    /**
     * Creates a backend. Nothing connects before the first operation is subscribed.
     *
     * @param factory an r2dbc-mariadb connection factory, or an r2dbc-pool {@code ConnectionPool} over one
     * @param options tables, sequence, schema creation, pool and poll settings
     * @return the backend; close it (or the {@code LockClient} over it) when done
     */
    public static MariaDbLockBackend create(ConnectionFactory factory, MariaDbLockOptions options) {
        return new MariaDbLockBackend(factory, options);
    }

    /** @return the options of this backend */
    public MariaDbLockOptions options() {
        return options;
    }

    /**
     * Creates the sequence and the lock table if missing ({@code schema.sql}): idempotent, and
     * serialized between processes by {@code GET_LOCK}. Needs the privileges to create them. Errors
     * are {@link LockBackendException}s (not transient for missing privileges).
     *
     * @return a {@code Mono} that completes when the schema exists
     */
    public Mono<Void> migrate() {
        return runSchema(schemaStatements).onErrorMap(e -> MariaDbErrors.map(null, "migrate", e));
    }

    /**
     * Checks that the lock table and the sequence exist with the configured names, whatever the
     * {@link MariaDbLockOptions#schemaMode()}; creates nothing.
     *
     * @return a {@code Mono} that completes when nothing is missing; else errors with a
     *         {@link MariaDbSchemaException} naming each missing object
     */
    public Mono<Void> validateSchema() {
        return schema.check(List.of(options.table(), options.sequence(), revocationTable(options)), "lock")
                .onErrorMap(e -> MariaDbErrors.map(null, "schema validation", e));
    }

    @Override
    public String name() {
        return MariaDbErrors.BACKEND;
    }

    /**
     * {@inheritDoc}
     *
     * <p>One autocommit statement ({@code acquire.sql}): an {@code INSERT ... ON DUPLICATE KEY UPDATE}
     * that locks the name's row (inserting an expired placeholder when there is none), then takes it
     * with a token drawn from the sequence under that lock when its lease has expired, or sets the
     * lease again for the same owner (same token), or leaves another owner's live lease; its
     * {@code RETURNING} row is the grant or the holder to answer busy with. A deadlock victim is
     * repeated at once (the statement was rolled back).
     */
    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        Objects.requireNonNull(request, "request");
        return Mono.defer(() -> {
            String n = StoredText.encode(request.name());
            String o = request.owner();
            outstanding.asking(n, o);
            long ttl = Micros.of(request.leaseTime());
            String payload = request.payload() == null ? null : StoredText.encode(request.payload());
            return schemaReady.then(Mono.usingWhen(connections.create(), c -> grant(c, n, o, ttl, payload, request), Connection::close))
                    .retryWhen(Retry.max(ROLLED_BACK_RETRIES).filter(MariaDbErrors::rolledBack))
                    .doOnNext(a -> {
                        outstanding.answered(n, o, !(a instanceof Attempt.Busy));
                        if (!(a instanceof Attempt.Busy)) {
                            poller.announce(new LockEvent.Acquired(request.name(), o, ((Attempt.Granted) a).token()));
                        }
                    })
                    .onErrorMap(e -> MariaDbErrors.map(request.name(), "acquire", e));
        });
    }

    private Mono<Attempt> grant(Connection c, String n, String o, long ttl, @Nullable String payload, GrantRequest request) {
        return Statements.rows(c, acquireSql, st -> {
            st.bind(0, n).bind(1, n).bind(2, o).bind(3, ttl);
            Statements.bindText(st, 4, payload);
        }, (row, md) -> new Holder(Statements.text(row, "owner"), Statements.number(row, "token"),
                Micros.remaining(Statements.number(row, "remaining_us")), payloadOf(row)))
                .last()
                .map(h -> h.owner().equals(o) ? (Attempt) Attempt.granted(h.token(), request.leaseTime()) : (Attempt) Attempt.busy(h));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One owner- and token-checked {@code UPDATE} per lease ({@code renew.sql}), sent
     * {@value RenewBatch#CHUNK} at a time in one compound statement ({@link RenewBatch}) on one
     * connection; a lease that has expired by the server's clock is not revived.
     */
    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        Objects.requireNonNull(batch, "batch");
        return Mono.defer(() -> {
            if (batch.isEmpty()) {
                return Mono.just(List.<RenewOutcome>of());
            }
            return schemaReady.then(Mono.usingWhen(connections.create(), c -> renewals.renew(c, batch), Connection::close))
                    .onErrorMap(e -> MariaDbErrors.map(batch.size() == 1 ? batch.get(0).lock().name() : null, "renewal", e));
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@code DELETE ... WHERE name = ? AND owner = ?} ({@code release.sql}); a release that
     * deleted a row is announced at once to this backend's waiters and observers, the others see it
     * at their next poll.
     */
    @Override
    public Mono<Boolean> release(String name, String owner) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        return Mono.defer(() -> {
            String n = StoredText.encode(name);
            return schemaReady.then(Mono.usingWhen(connections.create(),
                            c -> Statements.update(c, releaseSql, st -> st.bind(0, n).bind(1, owner)), Connection::close))
                    .map(deleted -> deleted > 0)
                    .doOnNext(deleted -> {
                        outstanding.released(n, owner, deleted);
                        if (deleted) {
                            poller.announce(new LockEvent.Released(name, owner, false));
                        }
                    })
                    .onErrorMap(e -> MariaDbErrors.map(name, "release", e));
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>Reads the row ({@code inspect.sql}); an expired row counts as free. The remaining lease is
     * computed by the server's clock.
     */
    @Override
    public Mono<Holder> inspect(String name) {
        Objects.requireNonNull(name, "name");
        return Mono.defer(() -> {
            String n = StoredText.encode(name);
            return schemaReady.then(Mono.usingWhen(connections.create(), c -> Statements.first(c, inspectSql, st -> st.bind(0, n),
                    (row, md) -> new Holder(Statements.text(row, "owner"), Statements.number(row, "token"),
                            Micros.remaining(Statements.number(row, "remaining_us")), payloadOf(row))), Connection::close))
                    .onErrorMap(e -> MariaDbErrors.map(name, "inspect", e));
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>An owner-, token- and expiry-checked {@code UPDATE} ({@code update_payload.sql}); announced
     * to this backend's observers at once, to others at their next poll.
     */
    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, @Nullable String payload) {
        Objects.requireNonNull(lock, "lock");
        return Mono.defer(() -> {
            String n = StoredText.encode(lock.name());
            String stored = payload == null ? null : StoredText.encode(payload);
            return schemaReady.then(Mono.usingWhen(connections.create(), c -> Statements.update(c, updatePayloadSql, st -> {
                Statements.bindText(st, 0, stored);
                st.bind(1, n).bind(2, lock.owner()).bind(3, lock.token());
            }).flatMap(updated -> updated > 0 ? Mono.just(true) : Statements.first(c, heldBySql, st -> {
                st.bind(0, n).bind(1, lock.owner()).bind(2, lock.token());
                Statements.bindText(st, 3, stored);
            }, (row, md) -> true).defaultIfEmpty(false)), Connection::close))
                    .doOnNext(written -> {
                        if (written) {
                            poller.announce(new LockEvent.Acquired(lock.name(), lock.owner(), lock.token()));
                        }
                    })
                    .onErrorMap(e -> MariaDbErrors.map(lock.name(), "payload update", e));
        });
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
        return Mono.defer(() -> query(waitingSql, st -> st.bind(0, StoredText.encode(name)), (row, md) -> Statements.number(row, "waiting"))
                .next()
                .map(n -> n == 0 ? -1 : (int) Math.min(Integer.MAX_VALUE, n))
                .defaultIfEmpty(-1)
                .onErrorResume(MariaDbErrors::noSuchTable, e -> Mono.just(-1))
                .onErrorMap(e -> MariaDbErrors.map(name, "waiting count", e)));
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@link LockEvent.Subscribed} at once; then the changes the backend's poller reads (every
     * {@link MariaDbLockOptions#pollInterval()}, one statement for every name watched) and the
     * releases and grants made through this backend, at once. Completes when the backend closes.
     */
    @Override
    public Flux<LockEvent> events(String name) {
        Objects.requireNonNull(name, "name");
        return poller.events(name);
    }

    /**
     * Closes the poller, deletes (owner-checked) whatever rows this backend's owners may have left —
     * leases lost and never released, grants whose answer never arrived — and closes the pool if the
     * backend created it. Bounded (about 3 s when the server does not answer) and idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    @Override
    public Mono<Void> close() {
        return close;
    }

    // ------------------------------------------------------------------ internals

    /**
     * The names with live rows in the lock, permits and read-write tables, and the queues with live
     * claims in the task table, that start with {@code prefix} (compared byte for byte, never
     * {@code LIKE}), one statement per table; a table that was never created holds nothing.
     */
    Flux<NameScan.Named> scanNames(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        return Flux.defer(() -> {
            String stored = StoredText.encode(StoredForm.scanPrefix(prefix));
            int length = stored.getBytes(StandardCharsets.UTF_8).length;
            Concept[] concepts = {Concept.LOCK, Concept.SEMAPHORE, Concept.READ_WRITE_LOCK, Concept.TASK_QUEUE};
            return Flux.range(0, concepts.length).concatMap(i -> query(namesSql[i], st -> st.bind(0, length).bind(1, stored),
                            (row, md) -> new NameScan.Named(concepts[i], StoredText.decode(Statements.bytes(row, "name"))))
                    .onErrorResume(MariaDbErrors::noSuchTable, e -> Flux.empty()));
        }).onErrorMap(e -> MariaDbErrors.map(null, "name scan", e));
    }

    /** Reads the state of watched names for the poller ({@code poll.sql}). */
    private Flux<Map.Entry<String, NamePoller.Seen>> poll(List<String> stored) {
        String sql = MariaDbSql.render("poll.sql", Map.of("table", names.get("table"), "names", MariaDbSql.marks(stored.size())));
        return query(sql, st -> {
            for (int i = 0; i < stored.size(); i++) {
                st.bind(i, stored.get(i));
            }
        }, (row, md) -> Map.entry(new String(Statements.bytes(row, "name"), StandardCharsets.UTF_8),
                new NamePoller.Seen(Statements.text(row, "owner"), Statements.number(row, "token"), Statements.number(row, "live") != 0)));
    }

    /** Notes an owner about to be granted the lock row of {@code stored} (another part of the session: the fair lock). */
    void asking(String stored, String owner) {
        outstanding.asking(stored, owner);
    }

    /** Notes the answer to {@link #asking}: a row of the owner is left only when it was granted. */
    void answered(String stored, String owner, boolean granted) {
        outstanding.answered(stored, owner, granted);
    }

    /** Notes a release made by another part of the session (the fair lock). */
    void released(String stored, String owner, boolean deleted) {
        outstanding.released(stored, owner, deleted);
    }

    /** @return the events of a name for a fair lock's waiters ({@link NamePoller#waiterEvents}) */
    Flux<LockEvent> waiterEvents(String name) {
        return poller.waiterEvents(name);
    }

    /** Tells this backend's waiters and observers at once of a change made through another part of the session. */
    void announce(LockEvent event) {
        poller.announce(event);
    }

    /** @return the owner-checked release of a lock row, for the fair lock */
    String releaseSql() {
        return releaseSql;
    }

    /** @return a connection from the backend's pool (closing it returns it) */
    Mono<? extends Connection> connections() {
        return Mono.from(connections.create());
    }

    /** Runs {@code sql} (one statement with bind parameters) on a pooled connection, returned on any end. */
    <T> Flux<T> query(String sql, Consumer<Statement> binder, BiFunction<Row, RowMetadata, T> mapper) {
        return Flux.usingWhen(connections.create(), c -> Statements.rows(c, sql, binder, mapper), Connection::close);
    }

    /** The first-use step under {@link MariaDbLockOptions#schemaMode()}; cached once it succeeded. */
    Mono<Void> schemaReady() {
        return schemaReady;
    }

    private Mono<Void> firstUse() {
        return firstUse("lock", List.of(options.table(), options.sequence(), revocationTable(options)), schemaStatements);
    }

    /**
     * The first-use step of one concept under {@link MariaDbLockOptions#schemaMode()} (see {@link SchemaSteps}).
     *
     * @param concept    the concept, for messages
     * @param objects    the tables and sequences it needs
     * @param statements the statements that create them
     * @return the step
     */
    Mono<Void> firstUse(String concept, List<String> objects, List<String> statements) {
        return schema.firstUse(concept, objects, statements);
    }

    /** Runs schema statements on one connection, serialized between processes by {@code GET_LOCK}. */
    Mono<Void> runSchema(List<String> statements) {
        return schema.run(statements);
    }

    private Mono<Void> doClose() {
        poller.close();
        List<OutstandingRows.Row> left = outstanding.drain();
        Mono<Void> sweep = left.isEmpty() ? Mono.empty() : Mono.usingWhen(connections.create(),
                        c -> Flux.fromIterable(left).concatMap(k -> Statements.update(c, releaseSql, st -> st.bind(0, k.name()).bind(1, k.owner()))).then(),
                        Connection::close)
                .timeout(CLOSE_SWEEP_TIMEOUT, options.scheduler())
                .onErrorResume(e -> Mono.empty());
        Mono<Void> pool = backendPool.close(CLOSE_POOL_TIMEOUT, options.scheduler());
        return sweep.then(pool);
    }

    /**
     * @param options the database, table and sequence
     * @return the placeholder values of the lock scripts
     */
    static Map<String, String> names(MariaDbLockOptions options) {
        Map<String, String> names = new HashMap<>();
        names.put("table", MariaDbSql.qualified(options.database(), options.table()));
        names.put("sequence", MariaDbSql.qualified(options.database(), options.sequence()));
        names.put("revocation_table", MariaDbSql.qualified(options.database(), revocationTable(options)));
        return names;
    }

    /** @return the revocation table's unquoted name: the lock table's with {@code _revocations} */
    static String revocationTable(MariaDbLockOptions options) {
        return derived(options.table(), "_revocations");
    }

    /**
     * A revocation request: a row the holder's poller reads ({@code revoke.sql}), kept 10 seconds;
     * the holder listening to the name receives it at its next poll.
     */
    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        Objects.requireNonNull(name, "name");
        return revoke(name, "l", owner, reason).onErrorMap(e -> MariaDbErrors.map(name, "revocation request", e));
    }

    /** Records a revocation request of one concept ({@code kind}: 'l', 's' or 'r') and forgets old ones. */
    Mono<Void> revoke(String name, String kind, String owner, String reason) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(reason, "reason");
        return Mono.defer(() -> schemaReady.then(Mono.usingWhen(connections(), c -> Statements.update(c, revokePurgeSql, st -> { })
                .then(Statements.update(c, revokeSql, st -> st.bind(0, StoredText.encode(name)).bind(1, kind).bind(2, owner)
                        .bind(3, reason.getBytes(StandardCharsets.UTF_8)))), Connection::close)).then());
    }

    /** @return the poller's reader of the revocation requests of one concept ({@code kind}) */
    Function<List<String>, Flux<NamePoller.Revocation>> revocationReader(String kind) {
        return stored -> {
            String sql = MariaDbSql.render("revocations_poll.sql", Map.of("revocation_table", names.get("revocation_table"),
                    "names", MariaDbSql.marks(stored.size())));
            return query(sql, st -> {
                st.bind(0, kind);
                for (int i = 0; i < stored.size(); i++) {
                    st.bind(i + 1, stored.get(i));
                }
            }, (row, md) -> new NamePoller.Revocation(new String(Statements.bytes(row, "name"), StandardCharsets.UTF_8), Statements.text(row, "owner"),
                    new String(Statements.bytes(row, "reason"), StandardCharsets.UTF_8), Statements.number(row, "at_us")));
        };
    }

    /** @return {@code base + suffix}, shortened to MariaDB's 64 characters */
    static String derived(String base, String suffix) {
        String s = base + suffix;
        return s.length() <= 64 ? s : s.substring(0, 64);
    }

    private static @Nullable String payloadOf(Row row) {
        return row.get("payload") == null ? null : Statements.text(row, "payload");
    }

    @Override
    public String toString() {
        return "MariaDbLockBackend{" + options + "}";
    }
}
