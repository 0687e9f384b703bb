package io.reactivelocks.r2dbc;

import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Statement;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Task capture on PostgreSQL ("state transition" in the source notes, with retries and queues):
 * tasks registered under a queue name, each with a number of retries, captured by any number of
 * workers across the fleet. A capture moves tasks atomically to {@code in_progress} and hands each
 * out as a {@link TaskClaim}: a lease on the task with a fencing token (from the lock sequence) and
 * an expiry by the server's clock. The worker then {@linkplain TaskClaim#complete() completes},
 * {@linkplain TaskClaim#fail() fails} (one retry less; none left: dead) or
 * {@linkplain TaskClaim#release() releases} it (capturable again, no retry used), renewing the
 * claim meanwhile — or lets {@link TaskClaim#process} do all of that around its work.
 *
 * <pre>{@code
 * PostgresTaskQueue tasks = PostgresTaskQueue.create(backend,
 *         LockOptions.builder().leaseTime(Duration.ofMinutes(1)).build());    // the claim time
 * tasks.register("emails", "welcome:42", 3).subscribe();
 * tasks.capture("emails")                                  // at most 8 claims outstanding here
 *      .flatMap(claim -> claim.process(c -> send(c.taskId(), c.token())), 8)
 *      .subscribe();
 * }</pre>
 *
 * <p><b>Capture</b> is one statement ({@code task_capture.sql}): {@code UPDATE ... FROM (SELECT ...
 * ORDER BY ready_at LIMIT n FOR UPDATE SKIP LOCKED)}. Concurrent captures never take the same task:
 * each locks the rows it picks, skips rows locked by others, and re-checks a row changed since its
 * snapshot on the row's latest version. An expired claim is capturable again by the same WHERE
 * clause — no sweeper process. The demand of the {@link #capture} stream bounds what is captured.
 *
 * <p><b>Retries.</b> {@code retries} is the number of failures that are retried: a task registered
 * with 2 retries is dead at its third failure. An expired claim does not use a retry
 * ({@link TaskClaim#attempt()} counts captures, so a worker can give up on a task that keeps
 * crashing it).
 *
 * <p><b>Timing</b> comes from {@link LockOptions}: the lease time is the default claim time, the
 * renewal interval (scaled to the claim time) paces {@link TaskClaim#hold()}, the backoff paces an
 * idle capturer's polls and the retries of transient failures, the request timeout bounds every
 * statement, the drift allowance shortens {@link TaskClaim#validUntilNanos()}, the clock measures it,
 * and the scheduler (the backend's when {@code null}) runs the timers. The server's clock alone
 * decides expiry.
 *
 * <p><b>Storage.</b> One table ({@link PostgresLockOptions#taskTable()}, in the backend's schema,
 * created by {@link #migrate()} or on first use when {@link PostgresLockOptions#createSchemaOnFirstUse()}),
 * see {@code task_schema.sql}. Queue names, task ids and payloads are data: bind parameters, stored
 * with NUL, lone surrogates and backslash escaped like lock names. Wake-ups travel on the backend's
 * notification channel.
 *
 * <p>Every method is lazy and non-blocking and checks its arguments at call time; failures are
 * {@link LockBackendException}s whose {@code lockName()} is the queue. A queue client uses the
 * connections and the listening connection of the {@link PostgresLockBackend} it was created from
 * and lives as long as that backend; it holds no resources of its own.
 */
public final class PostgresTaskQueue {

    static {
        GrantRequest.newOwner(); // seeds the owner-id generator on the thread creating the store, not on an event loop
    }

    /** The most tasks one capture statement takes, however large the demand. */
    public static final int MAX_CAPTURE_PER_STATEMENT = 500;

    /** The most task ids one registration statement carries. */
    static final int MAX_REGISTER_PER_STATEMENT = 1000;

    /**
     * The most UTF-8 bytes a queue name and a task id may take together in stored form (a b-tree
     * entry of the primary key holds at most 2704 bytes). Names without NUL, backslash or lone
     * surrogates are stored unchanged, so two 1024-byte names always fit.
     */
    static final int MAX_STORED_KEY_BYTES = 2600;

    private final PostgresLockBackend backend;
    private final LockOptions options;
    private final Scheduler scheduler;
    private final Mono<Void> schemaReady;
    private final String taskTableName;
    private final String sequenceName;

    final String schemaSql;
    final String schemaCheckSql;
    final String registerSql;
    final String captureSql;
    final String renewSql;
    final String completeSql;
    final String failSql;
    final String releaseSql;
    final String statusSql;
    final String removeSql;

    private PostgresTaskQueue(PostgresLockBackend backend, LockOptions options) {
        this.backend = backend;
        this.options = options;
        this.scheduler = options.scheduler() != null ? options.scheduler() : backend.options().scheduler();
        PostgresLockOptions o = backend.options();
        Map<String, String> names = new HashMap<>();
        names.put("schema", SqlIdentifiers.quote(o.schema()));
        names.put("schema_name", o.schema());
        names.put("sequence", SqlIdentifiers.qualified(o.schema(), o.sequence()));
        names.put("task_table", SqlIdentifiers.qualified(o.schema(), o.taskTable()));
        names.put("task_pkey", SqlIdentifiers.quote(SqlIdentifiers.derived(o.taskTable(), "_pkey")));
        names.put("task_ready_index", SqlIdentifiers.quote(SqlIdentifiers.derived(o.taskTable(), "_ready_idx")));
        this.taskTableName = names.get("task_table");
        this.sequenceName = names.get("sequence");
        this.schemaSql = SqlScripts.render("task_schema.sql", names, true);
        this.schemaCheckSql = SqlScripts.render("task_schema_check.sql", names, false);
        this.registerSql = SqlScripts.render("task_register.sql", names, false);
        this.captureSql = SqlScripts.render("task_capture.sql", names, false);
        this.renewSql = SqlScripts.render("task_renew.sql", names, false);
        this.completeSql = SqlScripts.render("task_complete.sql", names, false);
        this.failSql = SqlScripts.render("task_fail.sql", names, false);
        this.releaseSql = SqlScripts.render("task_release.sql", names, false);
        this.statusSql = SqlScripts.render("task_status.sql", names, false);
        this.removeSql = SqlScripts.render("task_remove.sql", names, false);
        this.schemaReady = Mono.defer(this::ensureSchema)
                .cache(v -> Duration.ofMillis(Long.MAX_VALUE), e -> Duration.ZERO, () -> Duration.ofMillis(Long.MAX_VALUE));
    }

    /**
     * @param backend the backend whose connections, listening connection, schema and sequence to use
     * @return a task queue client with {@link LockOptions#defaults()} (claims of 30 s)
     * @throws NullPointerException when backend is null
     */
    public static PostgresTaskQueue create(PostgresLockBackend backend) {
        return create(backend, LockOptions.defaults());
    }

    /**
     * @param backend the backend whose connections, listening connection, schema and sequence to use
     * @param options claim time (the lease time), renewal interval, backoff, request timeout, drift,
     *                clock and scheduler (see the class documentation)
     * @return a task queue client
     * @throws NullPointerException when an argument is null
     */
    public static PostgresTaskQueue create(PostgresLockBackend backend, LockOptions options) {
        return new PostgresTaskQueue(Objects.requireNonNull(backend, "backend"), Objects.requireNonNull(options, "options"));
    }

    /** @return the timing of this queue client */
    public LockOptions options() {
        return options;
    }

    /**
     * Creates the schema, the sequence, the task table and its index if missing
     * ({@code task_schema.sql}): idempotent and safe from many processes at once. Needs the
     * privileges to create them. On subscribe it runs once; cancel returns the connection; errors
     * are {@link LockBackendException} (not transient for missing privileges).
     *
     * @return a {@code Mono} that completes when the task table exists
     */
    public Mono<Void> migrate() {
        return backend.runScript(schemaSql).onErrorMap(e -> PostgresErrors.map(null, "task schema migration", e));
    }

    // ------------------------------------------------------------------ registration

    /**
     * Registers a task as pending, without payload; see {@link #register(String, String, int, String)}.
     *
     * @param queue   the queue name: non-empty, at most 1024 UTF-8 bytes, any characters
     * @param taskId  the task id: non-empty, at most 1024 UTF-8 bytes, any characters
     * @param retries how many failures are retried before the task is dead; at least 0
     * @return {@code true} when the task was new, {@code false} when the queue had it already
     * @throws NullPointerException     when queue or taskId is null
     * @throws IllegalArgumentException when a name is empty or too long, or retries is negative
     */
    public Mono<Boolean> register(String queue, String taskId, int retries) {
        return register(queue, taskId, retries, null);
    }

    /**
     * Registers a task as pending, in one statement per subscription, and wakes the queue's
     * waiting capturers. Idempotent: a task id the queue already has — in any state, done and
     * dead included — is left exactly as it is (its retries, payload and state are <em>not</em>
     * reset; {@link #remove} it first to register it afresh).
     *
     * @param queue   the queue name: non-empty, at most 1024 UTF-8 bytes, any characters
     * @param taskId  the task id: non-empty, at most 1024 UTF-8 bytes, any characters
     * @param retries how many failures are retried before the task is dead; at least 0
     * @param payload text handed to the worker with each claim ({@link TaskClaim#payload()}), or {@code null}
     * @return {@code true} when the task was new, {@code false} when the queue had it already;
     *         errors with {@link LockBackendException}
     * @throws NullPointerException     when queue or taskId is null
     * @throws IllegalArgumentException when a name is empty or too long, or retries is negative
     */
    public Mono<Boolean> register(String queue, String taskId, int retries, String payload) {
        checkKey(queue, taskId);
        checkRetries(retries);
        String storedPayload = payload == null ? null : TextEscapes.encode(payload);
        return Mono.defer(() -> registerStatement(queue, new String[] {TextEscapes.encode(taskId)},
                new String[] {storedPayload}, retries)).map(added -> added == 1);
    }

    /**
     * Registers many tasks as pending, without payload, in one statement per
     * 1000 ids, and wakes the queue's waiting capturers. Ids the
     * queue already has are left as they are (see {@link #register(String, String, int, String)}).
     *
     * @param queue   the queue name
     * @param taskIds the task ids (copied and checked at call time)
     * @param retries how many failures of each are retried before it is dead; at least 0
     * @return how many tasks were new; errors with {@link LockBackendException} (statements
     *         before the failing one stay committed)
     * @throws NullPointerException     when an argument or an id is null
     * @throws IllegalArgumentException when a name or id is empty or too long, or retries is negative
     */
    public Mono<Integer> registerAll(String queue, Collection<String> taskIds, int retries) {
        io.reactivelocks.spi.LockNames.check(queue, "queue");
        Objects.requireNonNull(taskIds, "taskIds");
        checkRetries(retries);
        List<String> stored = new ArrayList<>(taskIds.size());
        for (String id : taskIds) {
            checkKey(queue, id);
            stored.add(TextEscapes.encode(id));
        }
        return Flux.range(0, (stored.size() + MAX_REGISTER_PER_STATEMENT - 1) / MAX_REGISTER_PER_STATEMENT)
                .concatMap(chunk -> {
                    List<String> ids = stored.subList(chunk * MAX_REGISTER_PER_STATEMENT,
                            Math.min(stored.size(), (chunk + 1) * MAX_REGISTER_PER_STATEMENT));
                    return registerStatement(queue, ids.toArray(new String[0]), new String[ids.size()], retries);
                })
                .reduce(0, Integer::sum);
    }

    private Mono<Integer> registerStatement(String queue, String[] storedIds, String[] storedPayloads, int retries) {
        String storedQueue = TextEscapes.encode(queue);
        return PostgresLockBackend.firstOfAll(statement(queue, "task registration", registerSql, st -> st
                        .bind(0, storedQueue).bind(1, storedIds).bind(2, storedPayloads).bind(3, retries)
                        .bind(4, backend.options().channel()).bind(5, NotificationPayload.queueWakeUp(storedQueue)),
                (row, md) -> row.get("added", Long.class).intValue(), true))
                .defaultIfEmpty(0);
    }

    // ------------------------------------------------------------------ capture

    /**
     * Captures tasks of {@code queue} with the default claim time (the lease time of the options);
     * see {@link #capture(String, Duration)}.
     *
     * @param queue the queue name
     * @return the claims
     * @throws NullPointerException     when queue is null
     * @throws IllegalArgumentException when the name is empty or too long
     */
    public Flux<TaskClaim> capture(String queue) {
        return capture(queue, options.leaseTime());
    }

    /**
     * Captures tasks of {@code queue} as they become capturable, driven by demand: each
     * {@code request(n)} lets the next statement capture at most {@code n} tasks (at most
     * {@value #MAX_CAPTURE_PER_STATEMENT} per statement), so the stream never captures more than
     * was requested. One statement is in flight at a time; its claims are emitted once it
     * committed. Subscribing sends nothing until the first request.
     *
     * <p>When the queue has nothing capturable the stream waits — it never completes because the
     * queue is empty — for the first of: a wake-up on the backend's notification channel (a task
     * was registered, failed with a retry left, or released; also each (re)connection of the
     * listening connection), the expiry of the earliest live claim of the queue (reported by the
     * capture statement), and the next backoff step (polling with exponential backoff, capped at
     * the backoff's maximum: 1 s by default). Then it tries again.
     *
     * <p>Cancelling stops capturing: claims already delivered stay the subscriber's; claims
     * captured by a statement in flight (or not yet emitted) are released as soon as it answers.
     * Transient failures are retried with the backoff, at most {@code backoff.maxAttempts} times
     * in a row (10 when unbounded); then, or on a permanent failure, the stream errors with a
     * {@link LockBackendException}. It completes when the backend closes. Signals arrive on the
     * driver's I/O threads or the queue's scheduler: move slow work elsewhere
     * ({@code publishOn}, {@code flatMap}).
     *
     * @param queue     the queue name: non-empty, at most 1024 UTF-8 bytes, any characters
     * @param claimTime how long each claim lasts unless renewed, by the server's clock; at least 1 ms,
     *                  and longer than the drift allowance
     * @return the claims
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when the name is empty or too long, or the claim time too short
     */
    public Flux<TaskClaim> capture(String queue, Duration claimTime) {
        io.reactivelocks.spi.LockNames.check(queue, "queue");
        checkClaimTime(claimTime);
        return new Flux<>() {
            @Override
            public void subscribe(CoreSubscriber<? super TaskClaim> actual) {
                actual.onSubscribe(new TaskCapture(PostgresTaskQueue.this, queue, claimTime, actual));
            }
        };
    }

    /** A captured row ({@code kind} 'c') or the expiry hint ({@code kind} 'h'), see task_capture.sql. */
    record CaptureRow(char kind, String storedTaskId, long token, int retriesLeft, int attempts, String storedPayload,
                      Long nextExpiryUs) {
    }

    /** One capture statement; the rows come once it committed. */
    Mono<List<CaptureRow>> captureStatement(String queue, String owner, int limit, Duration claimTime) {
        String storedQueue = TextEscapes.encode(queue);
        long claimUs = PostgresLockBackend.micros(claimTime);
        return statement(queue, "task capture", captureSql, st -> st
                        .bind(0, storedQueue).bind(1, limit).bind(2, owner).bind(3, claimUs),
                (row, md) -> {
                    String kind = row.get("kind", String.class);
                    if ("c".equals(kind)) {
                        return new CaptureRow('c', row.get("task_id", String.class), row.get("token", Long.class),
                                row.get("retries_left", Integer.class), row.get("attempts", Integer.class),
                                row.get("payload", String.class), null);
                    }
                    return new CaptureRow('h', null, 0, 0, 0, null, row.get("next_expiry_us", Long.class));
                }, true)
                .collectList();
    }

    /** The claims of a capture's rows, timed from {@code sentAt}. */
    List<TaskClaim> claims(String queue, String owner, List<CaptureRow> rows, Duration claimTime, long sentAt) {
        List<TaskClaim> out = new ArrayList<>(rows.size());
        long validUntil = sentAt + options.validityNanos(claimTime);
        for (CaptureRow r : rows) {
            if (r.kind() == 'c') {
                out.add(new PostgresTaskClaim(this, queue, TextEscapes.decode(r.storedTaskId()), owner, r.token(),
                        r.retriesLeft(), r.attempts(), r.storedPayload() == null ? null : TextEscapes.decode(r.storedPayload()),
                        claimTime, validUntil));
            }
        }
        return out;
    }

    /**
     * Gives back claims of one capture statement that were never delivered: the given tasks, or
     * every task of {@code owner} when {@code taskIds} is null (the statement's answer was lost).
     * Best effort: errors are only logged by the caller; such claims expire by themselves.
     */
    Mono<Long> releaseUndelivered(String queue, String owner, List<TaskClaim> undelivered) {
        String[] ids = undelivered == null ? null
                : undelivered.stream().map(c -> TextEscapes.encode(c.taskId())).toArray(String[]::new);
        Long[] tokens = undelivered == null ? null : undelivered.stream().map(TaskClaim::token).toArray(Long[]::new);
        return releaseStatement(queue, owner, ids, tokens);
    }

    Mono<Long> releaseStatement(String queue, String owner, String[] storedIds, Long[] tokens) {
        String storedQueue = TextEscapes.encode(queue);
        return PostgresLockBackend.firstOfAll(statement(queue, "task release", releaseSql, st -> {
                    st.bind(0, storedQueue).bind(1, TextEscapes.encode(owner)).bind(2, backend.options().channel());
                    if (storedIds == null) {
                        st.bindNull(3, String[].class).bindNull(4, Long[].class);
                    } else {
                        st.bind(3, storedIds).bind(4, tokens);
                    }
                    st.bind(5, NotificationPayload.queueWakeUp(storedQueue));
                }, (row, md) -> row.get("released", Long.class), false))
                .defaultIfEmpty(0L);
    }

    // ------------------------------------------------------------------ claims (for PostgresTaskClaim)

    /** @return whether the claim was renewed */
    Mono<Boolean> renewStatement(TaskClaim c) {
        return statement(c.queue(), "claim renewal", renewSql, st -> st
                        .bind(0, TextEscapes.encode(c.queue())).bind(1, TextEscapes.encode(c.taskId()))
                        .bind(2, TextEscapes.encode(c.owner())).bind(3, c.token())
                        .bind(4, PostgresLockBackend.micros(c.claimTime())),
                (row, md) -> row.get("claim_token", Long.class), false)
                .count().map(n -> n > 0);
    }

    /** @return whether the task is now done */
    Mono<Boolean> completeStatement(TaskClaim c) {
        return statement(c.queue(), "task completion", completeSql, st -> st
                        .bind(0, TextEscapes.encode(c.queue())).bind(1, TextEscapes.encode(c.taskId()))
                        .bind(2, TextEscapes.encode(c.owner())).bind(3, c.token()),
                (row, md) -> row.get("status", String.class), false)
                .count().map(n -> n > 0);
    }

    /** @return whether the failure was recorded */
    Mono<Boolean> failStatement(TaskClaim c) {
        String storedQueue = TextEscapes.encode(c.queue());
        return statement(c.queue(), "task failure", failSql, st -> st
                        .bind(0, storedQueue).bind(1, TextEscapes.encode(c.taskId()))
                        .bind(2, TextEscapes.encode(c.owner())).bind(3, c.token())
                        .bind(4, backend.options().channel()).bind(5, NotificationPayload.queueWakeUp(storedQueue)),
                (row, md) -> row.get("status", String.class), false)
                .count().map(n -> n > 0);
    }

    /** @return whether the task was released */
    Mono<Boolean> releaseClaim(TaskClaim c) {
        return releaseStatement(c.queue(), c.owner(), new String[] {TextEscapes.encode(c.taskId())}, new Long[] {c.token()})
                .map(n -> n > 0);
    }

    // ------------------------------------------------------------------ inspection

    /**
     * Reads one task, in one statement per subscription.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return the task's status; empty when the queue does not have it; errors with {@link LockBackendException}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is empty or too long
     */
    public Mono<TaskStatus> status(String queue, String taskId) {
        checkKey(queue, taskId);
        return Mono.defer(() -> PostgresLockBackend.firstOfAll(statement(queue, "task status", statusSql, st -> st
                        .bind(0, TextEscapes.encode(queue)).bind(1, TextEscapes.encode(taskId)),
                (row, md) -> toStatus(queue, taskId, row), true)));
    }

    private static TaskStatus toStatus(String queue, String taskId, Row row) {
        String status = row.get("status", String.class);
        Long remainingUs = row.get("remaining_us", Long.class);
        Long token = row.get("claim_token", Long.class);
        String owner = row.get("claim_owner", String.class);
        String payload = row.get("payload", String.class);
        TaskState state;
        Duration remaining = null;
        switch (status) {
            case "in_progress" -> {
                if (remainingUs != null && remainingUs > 0) {
                    state = TaskState.IN_PROGRESS;
                    remaining = Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(remainingUs));
                } else {
                    state = TaskState.PENDING; // expired: capturable again
                }
            }
            case "done" -> state = TaskState.DONE;
            case "failed" -> state = TaskState.FAILED;
            case "dead" -> state = TaskState.DEAD;
            default -> state = TaskState.PENDING;
        }
        return new TaskStatus(queue, taskId, state, row.get("retries_left", Integer.class), row.get("attempts", Integer.class),
                token == null ? 0 : token, owner == null ? null : TextEscapes.decode(owner), remaining,
                payload == null ? null : TextEscapes.decode(payload));
    }

    /**
     * Forgets a task in any state (done and dead tasks stay until removed), in one statement per
     * subscription. A claim on it can then no longer complete, fail or release it.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return {@code true} when the queue had the task; errors with {@link LockBackendException}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is empty or too long
     */
    public Mono<Boolean> remove(String queue, String taskId) {
        checkKey(queue, taskId);
        return Mono.defer(() -> statement(queue, "task removal", removeSql, st -> st
                        .bind(0, TextEscapes.encode(queue)).bind(1, TextEscapes.encode(taskId)),
                (row, md) -> row.get("task_id", String.class), true)
                .count().map(n -> n > 0));
    }

    // ------------------------------------------------------------------ internals

    Flux<LockEvent> events(String queue) {
        return backend.queueEvents(queue);
    }

    Scheduler scheduler() {
        return scheduler;
    }

    LockClock clock() {
        return options.clock();
    }

    /** @return how often {@link TaskClaim#hold()} renews a claim of {@code claimTime}: the renewal interval scaled to it */
    Duration renewalInterval(Duration claimTime) {
        double ratio = (double) options.renewalInterval().toNanos() / options.leaseTime().toNanos();
        return Duration.ofNanos(Math.max(1, (long) (claimTime.toNanos() * ratio)));
    }

    /** @return {@code backoff.maxAttempts}, or 10 when it is unbounded: failed capture statements retried in a row */
    long maxCaptureRetries() {
        long max = options.backoff().maxAttempts;
        return max >= Integer.MAX_VALUE ? 10 : max;
    }

    /**
     * @param attempt 1 for the first wait
     * @return the backoff's delay for that attempt: {@code min(max, min·2^(attempt−1))}, with its jitter
     */
    long backoffNanos(long attempt) {
        return io.reactivelocks.spi.Backoff.delayNanos(options.backoff(), attempt);
    }

    /**
     * One statement of this queue: on a pooled connection (returned on any end), bounded by the
     * request timeout, errors mapped; {@code schema}: preceded by the first-use schema check.
     */
    <T> Flux<T> statement(String queue, String operation, String sql, Consumer<Statement> binder,
                          BiFunction<Row, RowMetadata, T> mapper, boolean schema) {
        Flux<T> work = backend.query(sql, binder, mapper);
        if (schema && backend.options().createSchemaOnFirstUse()) {
            work = schemaReady.thenMany(work);
        }
        return work.timeout(options.requestTimeout(), scheduler)
                .onErrorMap(e -> PostgresErrors.mapQueue(queue, operation, e));
    }

    private Mono<Void> ensureSchema() {
        return backend.query(schemaCheckSql, st -> st.bind(0, taskTableName).bind(1, sequenceName),
                        (row, md) -> Boolean.TRUE.equals(row.get("ready", Boolean.class)))
                .reduce(Boolean::logicalAnd)
                .defaultIfEmpty(false)
                .flatMap(ready -> ready ? Mono.<Void>empty() : backend.runScript(schemaSql));
    }

    private void checkClaimTime(Duration claimTime) {
        Objects.requireNonNull(claimTime, "claimTime");
        if (claimTime.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("claimTime must be at least 1 ms, was " + claimTime);
        }
        if (options.validityNanos(claimTime) <= 0) {
            throw new IllegalArgumentException("claimTime " + claimTime + " is eaten by the drift allowance ("
                    + options.driftFactor() + " x + " + options.driftConstant() + ")");
        }
    }

    private static void checkRetries(int retries) {
        if (retries < 0) {
            throw new IllegalArgumentException("retries must be at least 0, was " + retries);
        }
    }

    private static void checkKey(String queue, String taskId) {
        io.reactivelocks.spi.LockNames.check(queue, "queue");
        io.reactivelocks.spi.LockNames.check(taskId, "taskId");
        int stored = io.reactivelocks.spi.LockNames.utf8Length(TextEscapes.encode(queue)) + io.reactivelocks.spi.LockNames.utf8Length(TextEscapes.encode(taskId));
        if (stored > MAX_STORED_KEY_BYTES) {
            throw new IllegalArgumentException("queue and taskId together take " + stored + " UTF-8 bytes when stored"
                    + " (NUL, backslash and lone surrogates escaped), at most " + MAX_STORED_KEY_BYTES);
        }
    }

    @Override
    public String toString() {
        return "PostgresTaskQueue{" + taskTableName + ", " + options + "}";
    }
}
