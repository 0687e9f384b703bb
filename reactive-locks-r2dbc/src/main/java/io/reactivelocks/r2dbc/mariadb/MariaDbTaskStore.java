package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Row;
import io.reactivelocks.LockNames;
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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Task queues on MariaDB: one row per task in {@code <lock table>_tasks}. A capture is one
 * {@code READ COMMITTED} transaction that picks the oldest capturable tasks with
 * {@code SELECT ... FOR UPDATE SKIP LOCKED} (MariaDB 10.6+: concurrent capturers skip each other's
 * rows instead of waiting) and claims each with a token from the lock sequence and a deadline by the
 * server's clock; an expired claim is captured again without a sweeper. Completion, failure, release
 * and renewal are owner- and token-checked single statements. Capturers are woken by this store's
 * poller of the queues waited for and at once by registrations, failures and releases through it.
 * Uses the pool of its {@link MariaDbLockBackend}, which it does not close.
 */
final class MariaDbTaskStore implements TaskStore {

    private static final Duration FOREVER = Duration.ofMillis(Long.MAX_VALUE);
    private static final int ROLLED_BACK_RETRIES = 3;
    private static final int MAX_QUEUE_BYTES = 1024;
    private static final int MAX_TASK_ID_BYTES = 2048;
    private static final int REGISTER_CHUNK = 100;

    private final MariaDbLockBackend backend;
    private final String table;
    private final Mono<Void> ready;
    private final NamePoller poller;
    private final Map<String, String> sql = new HashMap<>();

    MariaDbTaskStore(MariaDbLockBackend backend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        Map<String, String> names = names(backend.options());
        this.table = names.get("task_table");
        String tableName = tableName(backend.options());
        List<String> statements = MariaDbSql.statements("task_schema.sql", names);
        this.ready = Mono.defer(() -> backend.firstUse("task queue", List.of(tableName, backend.options().sequence()), statements))
                .cache(v -> FOREVER, e -> Duration.ZERO, () -> FOREVER);
        for (String s : List.of("task_capture", "task_renew", "task_complete", "task_fail", "task_release", "task_release_owner",
                "task_status", "task_remove", "task_claims")) {
            sql.put(s, MariaDbSql.render(s + ".sql", names));
        }
        this.poller = new NamePoller(backend.options().pollInterval(), backend.options().scheduler(), this::poll);
    }

    /** @return the task table's unquoted name: the lock table's with {@code _tasks} */
    static String tableName(MariaDbLockOptions o) {
        return MariaDbLockBackend.derived(o.table(), "_tasks");
    }

    /** @return the placeholder values of the task scripts */
    static Map<String, String> names(MariaDbLockOptions o) {
        Map<String, String> names = new HashMap<>(MariaDbLockBackend.names(o));
        names.put("task_table", MariaDbSql.qualified(o.database(), tableName(o)));
        names.put("ready_index", MariaDbSql.quote(MariaDbLockBackend.derived(tableName(o), "_ready_idx")));
        return names;
    }

    @Override
    public String name() {
        return MariaDbErrors.BACKEND;
    }

    @Override
    public void checkKey(String queue, String taskId) {
        int q = LockNames.utf8Length(StoredText.encode(queue));
        int t = LockNames.utf8Length(StoredText.encode(taskId));
        if (q > MAX_QUEUE_BYTES || t > MAX_TASK_ID_BYTES) {
            throw new IllegalArgumentException("queue takes " + q + " and taskId " + t + " UTF-8 bytes when stored ('\\' and"
                    + " lone surrogates escaped), at most " + MAX_QUEUE_BYTES + " and " + MAX_TASK_ID_BYTES);
        }
    }

    private <T> Mono<T> work(String queue, String operation, Mono<T> w) {
        return Mono.defer(() -> ready.then(w)).onErrorMap(e -> MariaDbErrors.map(queue, operation, e));
    }

    private <T> Mono<T> onConnection(Function<Connection, Mono<T>> w) {
        return Mono.usingWhen(backend.connections(), w, Connection::close);
    }

    @Override
    public Mono<Integer> register(String queue, List<NewTask> tasks, int retries) {
        String q = StoredText.encode(queue);
        List<List<NewTask>> chunks = new ArrayList<>();
        for (int i = 0; i < tasks.size(); i += REGISTER_CHUNK) {
            chunks.add(tasks.subList(i, Math.min(tasks.size(), i + REGISTER_CHUNK)));
        }
        return work(queue, "task registration", onConnection(c -> Flux.fromIterable(chunks).index().concatMap(chunk -> {
            String rows = String.join(", ", java.util.Collections.nCopies(chunk.getT2().size(),
                    "(?, ?, 'pending', ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))"));
            String statement = MariaDbSql.render("task_register.sql", Map.of("task_table", table, "rows", rows));
            long base = chunk.getT1() * REGISTER_CHUNK;
            return Statements.update(c, statement, st -> {
                int p = 0;
                for (int i = 0; i < chunk.getT2().size(); i++) {
                    NewTask t = chunk.getT2().get(i);
                    st.bind(p++, q).bind(p++, StoredText.encode(t.taskId())).bind(p++, retries);
                    Statements.bindText(st, p++, t.payload() == null ? null : StoredText.encode(t.payload()));
                    st.bind(p++, base + i);
                }
            });
        }).reduce(0L, Long::sum)))
                .map(Long::intValue)
                .doOnNext(added -> {
                    if (added > 0) {
                        poller.announce(new LockEvent.Released(queue, "", false));
                    }
                });
    }

    @Override
    public Mono<Capture> capture(String queue, String owner, int limit, Duration claimTime) {
        String q = StoredText.encode(queue);
        long claimUs = Micros.of(claimTime);
        return work(queue, "task capture", onConnection(c -> Statements.rows(c, sql.get("task_capture"),
                        st -> st.bind(0, q).bind(1, limit).bind(2, owner).bind(3, claimUs), (row, md) -> row.get("task_id") == null
                                // fewer than the limit: when the queue's next claim expires (none: NULL)
                                ? new CaptureRow(null, row.get("next_us") == null ? null : Statements.number(row, "next_us"))
                                : new CaptureRow(new CapturedTask(Statements.text(row, "task_id"), Statements.number(row, "token"),
                                        (int) Statements.number(row, "attempts"), (int) Statements.number(row, "retries_left"),
                                        text(row, "payload")), null))
                .collectList()
                .map(rows -> {
                    List<CapturedTask> tasks = new ArrayList<>(rows.size());
                    Duration next = null;
                    for (CaptureRow r : rows) {
                        if (r.task() != null) {
                            tasks.add(r.task());
                        } else if (r.nextUs() != null) {
                            next = Duration.ofNanos(r.nextUs() * 1000);
                        }
                    }
                    return new Capture(tasks, claimTime, next);
                })
                .retryWhen(Retry.max(ROLLED_BACK_RETRIES).filter(MariaDbErrors::rolledBack))));
    }

    /** One result row of task_capture.sql: a claimed task, or (task_id NULL) when the queue's next claim expires. */
    private record CaptureRow(@Nullable CapturedTask task, @Nullable Long nextUs) {
    }

    @Override
    public Mono<List<Boolean>> renew(String queue, List<ClaimRef> claims, Duration claimTime) {
        String q = StoredText.encode(queue);
        long claimUs = Micros.of(claimTime);
        return work(queue, "claim renewal", onConnection(c -> Flux.fromIterable(claims)
                .concatMap(r -> Statements.update(c, sql.get("task_renew"), st -> st.bind(0, claimUs).bind(1, claimUs)
                        .bind(2, q).bind(3, StoredText.encode(r.taskId())).bind(4, r.owner()).bind(5, r.token())).map(n -> n > 0))
                .collectList()));
    }

    private Mono<Long> claimStatement(String queue, String operation, String statement, ClaimRef claim) {
        return work(queue, operation, onConnection(c -> Statements.update(c, statement, st -> st
                .bind(0, StoredText.encode(queue)).bind(1, StoredText.encode(claim.taskId())).bind(2, claim.owner())
                .bind(3, claim.token()))));
    }

    @Override
    public Mono<Boolean> complete(String queue, ClaimRef claim) {
        return claimStatement(queue, "task completion", sql.get("task_complete"), claim).map(n -> n > 0);
    }

    @Override
    public Mono<Boolean> fail(String queue, ClaimRef claim) {
        return claimStatement(queue, "task failure", sql.get("task_fail"), claim).map(n -> n > 0)
                .doOnNext(failed -> {
                    if (failed) {
                        poller.announce(new LockEvent.Released(queue, "", false));
                    }
                });
    }

    @Override
    public Mono<Integer> release(String queue, List<ClaimRef> claims) {
        return Flux.fromIterable(claims)
                .concatMap(c -> claimStatement(queue, "task release", sql.get("task_release"), c))
                .reduce(0L, Long::sum)
                .map(Long::intValue)
                .doOnNext(n -> {
                    if (n > 0) {
                        poller.announce(new LockEvent.Released(queue, "", false));
                    }
                });
    }

    @Override
    public Mono<Integer> releaseOwner(String queue, String owner) {
        return work(queue, "task release", onConnection(c -> Statements.update(c, sql.get("task_release_owner"),
                st -> st.bind(0, StoredText.encode(queue)).bind(1, owner))))
                .map(Long::intValue)
                .doOnNext(n -> {
                    if (n > 0) {
                        poller.announce(new LockEvent.Released(queue, "", false));
                    }
                });
    }

    @Override
    public Mono<TaskStatus> status(String queue, String taskId) {
        return work(queue, "task status", onConnection(c -> Statements.first(c, sql.get("task_status"),
                st -> st.bind(0, StoredText.encode(queue)).bind(1, StoredText.encode(taskId)), (row, md) -> toStatus(queue, taskId, row))));
    }

    private static TaskStatus toStatus(String queue, String taskId, Row row) {
        String status = String.valueOf(row.get("status", String.class));
        Object remainingUs = row.get("remaining_us");
        Object token = row.get("claim_token");
        String owner = row.get("claim_owner") == null ? null : Statements.text(row, "claim_owner");
        TaskState state;
        Duration remaining = null;
        switch (status) {
            case "in_progress" -> {
                long r = remainingUs == null ? 0 : Statements.number(row, "remaining_us");
                if (r > 0) {
                    state = TaskState.IN_PROGRESS;
                    remaining = Duration.ofNanos(r * 1000);
                } else {
                    state = TaskState.PENDING; // expired: capturable again
                }
            }
            case "done" -> state = TaskState.DONE;
            case "failed" -> state = TaskState.FAILED;
            case "dead" -> state = TaskState.DEAD;
            default -> state = TaskState.PENDING;
        }
        return new TaskStatus(queue, taskId, state, (int) Statements.number(row, "retries_left"),
                (int) Statements.number(row, "attempts"), token == null ? 0 : Statements.number(row, "claim_token"),
                owner, remaining, text(row, "payload"));
    }

    @Override
    public Flux<HeldClaim> claims(String queue) {
        return work(queue, "task claims", onConnection(c -> Statements.rows(c, sql.get("task_claims"),
                st -> st.bind(0, StoredText.encode(queue)), (row, md) -> new HeldClaim(Statements.text(row, "task_id"),
                        Statements.text(row, "claim_owner"), Statements.number(row, "claim_token"),
                        Micros.remaining(Statements.number(row, "remaining_us")))).collectList()))
                .flatMapMany(Flux::fromIterable);
    }

    @Override
    public Mono<Boolean> remove(String queue, String taskId) {
        return work(queue, "task removal", onConnection(c -> Statements.update(c, sql.get("task_remove"),
                st -> st.bind(0, StoredText.encode(queue)).bind(1, StoredText.encode(taskId))))).map(n -> n > 0);
    }

    @Override
    public Flux<TaskWakeUp> wakeUps(String queue) {
        return poller.events(queue).map(e -> new TaskWakeUp(queue, e instanceof LockEvent.Subscribed));
    }

    @Override
    public Mono<Void> close() {
        return Mono.fromRunnable(poller::close);
    }

    private Flux<Map.Entry<String, NamePoller.Seen>> poll(List<String> stored) {
        String statement = MariaDbSql.render("task_poll.sql", Map.of("task_table", table, "names", MariaDbSql.marks(stored.size())));
        return backend.query(statement, st -> {
            for (int i = 0; i < stored.size(); i++) {
                st.bind(i, stored.get(i));
            }
        }, (row, md) -> Map.entry(new String(Statements.bytes(row, "name"), StandardCharsets.UTF_8),
                new NamePoller.Seen(new String(Statements.bytes(row, "owner"), StandardCharsets.UTF_8), 0, true)));
    }

    private static @Nullable String text(Row row, String column) {
        return row.get(column) == null ? null : Statements.text(row, column);
    }

    @Override
    public String toString() {
        return "MariaDbTaskStore{" + table + "}";
    }
}
