package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Statement;
import io.reactivelocks.r2dbc.internal.Micros;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.task.Capture;
import io.reactivelocks.spi.task.CapturedTask;
import io.reactivelocks.spi.task.ClaimRef;
import io.reactivelocks.spi.task.HeldClaim;
import io.reactivelocks.spi.task.NewTask;
import io.reactivelocks.spi.task.TaskStore;
import io.reactivelocks.spi.task.TaskWakeUp;
import io.reactivelocks.task.TaskState;
import io.reactivelocks.task.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The {@link TaskStore} on PostgreSQL: one table ({@link PostgresLockOptions#taskTable()}, in the
 * backend's schema, see {@code task_schema.sql}) and one statement per operation.
 *
 * <p><b>Capture</b> is one statement ({@code task_capture.sql}): {@code UPDATE ... FROM (SELECT ...
 * ORDER BY ready_at LIMIT n FOR UPDATE SKIP LOCKED)}. Concurrent captures never take the same task:
 * each locks the rows it picks, skips rows locked by others, and re-checks a row changed since its
 * snapshot on the row's latest version. An expired claim is capturable again by the same WHERE
 * clause — no sweeper process. Tokens come from the lock sequence ({@code nextval}, durable), and
 * the server's {@code now()} alone decides expiry. Wake-ups travel on the backend's notification
 * channel ({@code pg_notify} in the statements that make tasks capturable).
 *
 * <p>Queue names, task ids and payloads are data: bind parameters, stored with NUL, lone surrogates
 * and backslash escaped ({@link TextEscapes#encode}). A queue name and a task id together take at
 * most {@value #MAX_STORED_KEY_BYTES} bytes in stored form (a b-tree entry of the primary key).
 */
final class PostgresTaskStore implements TaskStore {

    /**
     * The most UTF-8 bytes a queue name and a task id may take together in stored form (a b-tree
     * entry of the primary key holds at most 2704 bytes). Names without NUL, backslash or lone
     * surrogates are stored unchanged, so two 1024-byte names always fit.
     */
    static final int MAX_STORED_KEY_BYTES = 2600;

    private final PostgresLockBackend backend;
    private final boolean ownsBackend;
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
    final String claimsSql;

    /**
     * @param backend     the backend whose connections, listening connection, schema and sequence to use
     * @param ownsBackend whether {@link #close()} closes the backend
     */
    PostgresTaskStore(PostgresLockBackend backend, boolean ownsBackend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.ownsBackend = ownsBackend;
        Map<String, String> names = names(backend.options());
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
        this.claimsSql = SqlScripts.render("task_claims.sql", names, false);
        ExpectedSchema expected = ExpectedSchema.of(schemaSql);
        this.schemaReady = Mono.defer(() -> backend.firstUse("task queue", expected, ensureSchema()))
                .cache(v -> Duration.ofMillis(Long.MAX_VALUE), e -> Duration.ZERO, () -> Duration.ofMillis(Long.MAX_VALUE));
    }

    /**
     * @param o the schema, task table and sequence
     * @return the placeholder values of this store's scripts
     */
    static Map<String, String> names(PostgresLockOptions o) {
        Map<String, String> names = new HashMap<>();
        names.put("schema", SqlIdentifiers.quote(o.schema()));
        names.put("schema_name", o.schema());
        names.put("sequence", SqlIdentifiers.qualified(o.schema(), o.sequence()));
        names.put("task_table", SqlIdentifiers.qualified(o.schema(), o.taskTable()));
        names.put("task_pkey", SqlIdentifiers.quote(SqlIdentifiers.derived(o.taskTable(), "_pkey")));
        names.put("task_ready_index", SqlIdentifiers.quote(SqlIdentifiers.derived(o.taskTable(), "_ready_idx")));
        return names;
    }

    @Override
    public String name() {
        return "postgresql";
    }

    /**
     * Creates the schema, the sequence, the task table and its index if missing: idempotent and
     * safe from many processes at once.
     *
     * @return completes when the task table exists
     */
    Mono<Void> migrate() {
        return backend.runScript(schemaSql).onErrorMap(e -> PostgresErrors.map(null, "task schema migration", e));
    }

    @Override
    public void checkKey(String queue, String taskId) {
        int stored = io.reactivelocks.LockNames.utf8Length(TextEscapes.encode(queue)) + io.reactivelocks.LockNames.utf8Length(TextEscapes.encode(taskId));
        if (stored > MAX_STORED_KEY_BYTES) {
            throw new IllegalArgumentException("queue and taskId together take " + stored + " UTF-8 bytes when stored"
                    + " (NUL, backslash and lone surrogates escaped), at most " + MAX_STORED_KEY_BYTES);
        }
    }

    @Override
    public Mono<Integer> register(String queue, List<NewTask> tasks, int retries) {
        String storedQueue = TextEscapes.encode(queue);
        String[] ids = new String[tasks.size()];
        String[] payloads = new String[tasks.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = TextEscapes.encode(tasks.get(i).taskId());
            String p = tasks.get(i).payload();
            payloads[i] = p == null ? null : TextEscapes.encode(p);
        }
        return PostgresLockBackend.firstOfAll(statement(queue, "task registration", registerSql, st -> st
                        .bind(0, storedQueue).bind(1, ids).bind(2, payloads).bind(3, retries)
                        .bind(4, backend.options().channel()).bind(5, NotificationPayload.queueWakeUp(storedQueue)),
                (row, md) -> row.get("added", Long.class).intValue(), true))
                .defaultIfEmpty(0);
    }

    /** A captured row ({@code kind} 'c') or the expiry hint ({@code kind} 'h'), see task_capture.sql. */
    private record CaptureRow(char kind, @Nullable CapturedTask task, @Nullable Long nextExpiryUs) {
    }

    @Override
    public Mono<Capture> capture(String queue, String owner, int limit, Duration claimTime) {
        String storedQueue = TextEscapes.encode(queue);
        long claimUs = Micros.of(claimTime);
        return statement(queue, "task capture", captureSql, st -> st
                        .bind(0, storedQueue).bind(1, limit).bind(2, TextEscapes.encode(owner)).bind(3, claimUs),
                (row, md) -> {
                    if ("c".equals(row.get("kind", String.class))) {
                        String payload = row.get("payload", String.class);
                        return new CaptureRow('c', new CapturedTask(TextEscapes.decode(row.get("task_id", String.class)),
                                row.get("token", Long.class), row.get("attempts", Integer.class),
                                row.get("retries_left", Integer.class), payload == null ? null : TextEscapes.decode(payload)),
                                null);
                    }
                    return new CaptureRow('h', null, row.get("next_expiry_us", Long.class));
                }, true)
                .collectList()
                .map(rows -> {
                    List<CapturedTask> tasks = new ArrayList<>(rows.size());
                    Duration next = null;
                    for (CaptureRow r : rows) {
                        if (r.kind() == 'c') {
                            tasks.add(r.task());
                        } else if (r.nextExpiryUs() != null) {
                            next = Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(Math.max(0, r.nextExpiryUs())));
                        }
                    }
                    return new Capture(tasks, claimTime, next);
                });
    }

    @Override
    public Mono<List<Boolean>> renew(String queue, List<ClaimRef> claims, Duration claimTime) {
        String[] ids = new String[claims.size()];
        String[] owners = new String[claims.size()];
        Long[] tokens = new Long[claims.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = TextEscapes.encode(claims.get(i).taskId());
            owners[i] = TextEscapes.encode(claims.get(i).owner());
            tokens[i] = claims.get(i).token();
        }
        return statement(queue, "claim renewal", renewSql, st -> st
                        .bind(0, TextEscapes.encode(queue)).bind(1, ids).bind(2, owners).bind(3, tokens)
                        .bind(4, Micros.of(claimTime)),
                (row, md) -> row.get("task_id", String.class) + '\u0000' + row.get("claim_token", Long.class), false)
                .collect(java.util.stream.Collectors.toSet())
                .map(renewed -> {
                    List<Boolean> out = new ArrayList<>(ids.length);
                    for (int i = 0; i < ids.length; i++) {
                        out.add(renewed.contains(ids[i] + '\u0000' + tokens[i]));
                    }
                    return out;
                });
    }

    @Override
    public Mono<Boolean> complete(String queue, ClaimRef c) {
        return statement(queue, "task completion", completeSql, st -> st
                        .bind(0, TextEscapes.encode(queue)).bind(1, TextEscapes.encode(c.taskId()))
                        .bind(2, TextEscapes.encode(c.owner())).bind(3, c.token()),
                (row, md) -> row.get("status", String.class), false)
                .count().map(n -> n > 0);
    }

    @Override
    public Mono<Boolean> fail(String queue, ClaimRef c) {
        String storedQueue = TextEscapes.encode(queue);
        return statement(queue, "task failure", failSql, st -> st
                        .bind(0, storedQueue).bind(1, TextEscapes.encode(c.taskId()))
                        .bind(2, TextEscapes.encode(c.owner())).bind(3, c.token())
                        .bind(4, backend.options().channel()).bind(5, NotificationPayload.queueWakeUp(storedQueue)),
                (row, md) -> row.get("status", String.class), false)
                .count().map(n -> n > 0);
    }

    @Override
    public Mono<Integer> release(String queue, List<ClaimRef> claims) {
        Map<String, List<ClaimRef>> byOwner = new LinkedHashMap<>();
        claims.forEach(c -> byOwner.computeIfAbsent(c.owner(), k -> new ArrayList<>()).add(c));
        return Flux.fromIterable(byOwner.entrySet())
                .concatMap(e -> releaseStatement(queue, e.getKey(),
                        e.getValue().stream().map(c -> TextEscapes.encode(c.taskId())).toArray(String[]::new),
                        e.getValue().stream().map(ClaimRef::token).toArray(Long[]::new)))
                .reduce(0L, Long::sum)
                .map(Long::intValue);
    }

    @Override
    public Mono<Integer> releaseOwner(String queue, String owner) {
        return releaseStatement(queue, owner, null, null).map(Long::intValue);
    }

    private Mono<Long> releaseStatement(String queue, String owner, String @Nullable [] storedIds, Long @Nullable [] tokens) {
        String storedQueue = TextEscapes.encode(queue);
        return PostgresLockBackend.firstOfAll(statement(queue, "task release", releaseSql, st -> {
                    st.bind(0, storedQueue).bind(1, TextEscapes.encode(owner)).bind(2, backend.options().channel());
                    if (storedIds == null || tokens == null) {
                        st.bindNull(3, String[].class).bindNull(4, Long[].class);
                    } else {
                        st.bind(3, storedIds).bind(4, tokens);
                    }
                    st.bind(5, NotificationPayload.queueWakeUp(storedQueue));
                }, (row, md) -> row.get("released", Long.class), false))
                .defaultIfEmpty(0L);
    }

    @Override
    public Flux<HeldClaim> claims(String queue) {
        return statement(queue, "task claims", claimsSql, st -> st.bind(0, TextEscapes.encode(queue)),
                (row, md) -> new HeldClaim(TextEscapes.decode(row.get("task_id", String.class)),
                        TextEscapes.decode(row.get("claim_owner", String.class)), row.get("claim_token", Long.class),
                        Duration.ofMillis(Math.max(0, row.get("remaining_ms", Long.class)))), true);
    }

    @Override
    public Mono<TaskStatus> status(String queue, String taskId) {
        return PostgresLockBackend.firstOfAll(statement(queue, "task status", statusSql, st -> st
                        .bind(0, TextEscapes.encode(queue)).bind(1, TextEscapes.encode(taskId)),
                (row, md) -> toStatus(queue, taskId, row), true));
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

    @Override
    public Mono<Boolean> remove(String queue, String taskId) {
        return statement(queue, "task removal", removeSql, st -> st
                        .bind(0, TextEscapes.encode(queue)).bind(1, TextEscapes.encode(taskId)),
                (row, md) -> row.get("task_id", String.class), true)
                .count().map(n -> n > 0);
    }

    @Override
    public Flux<TaskWakeUp> wakeUps(String queue) {
        return backend.queueEvents(queue).map(e -> new TaskWakeUp(queue, e instanceof LockEvent.Subscribed));
    }

    @Override
    public Mono<Void> close() {
        return ownsBackend ? backend.close() : Mono.empty();
    }

    /**
     * One statement of this store: on a pooled connection (returned on any end), errors mapped;
     * {@code schema}: preceded by the first-use schema step ({@link PostgresLockOptions#schemaMode()}). The engine bounds it by the request timeout.
     */
    private <T> Flux<T> statement(String queue, String operation, String sql, Consumer<Statement> binder,
                                  BiFunction<Row, RowMetadata, T> mapper, boolean schema) {
        return Flux.defer(() -> {
            Flux<T> work = backend.query(sql, binder, mapper);
            if (schema) {
                work = schemaReady.thenMany(work);
            }
            return work.onErrorMap(e -> PostgresErrors.mapQueue(queue, operation, e));
        });
    }

    private Mono<Void> ensureSchema() {
        return backend.query(schemaCheckSql, st -> st.bind(0, taskTableName).bind(1, sequenceName),
                        (row, md) -> Boolean.TRUE.equals(row.get("ready", Boolean.class)))
                .reduce(Boolean::logicalAnd)
                .defaultIfEmpty(false)
                .flatMap(ready -> ready ? Mono.<Void>empty() : backend.runScript(schemaSql));
    }

    @Override
    public String toString() {
        return "PostgresTaskStore{" + taskTableName + "}";
    }
}
