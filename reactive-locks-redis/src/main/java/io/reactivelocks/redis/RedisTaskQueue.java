package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.LockNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Task capture ("state transition" in the source notes): tasks registered under a queue name,
 * each with a number of retries, captured by any number of workers across the fleet. A capture
 * moves tasks atomically to <i>in progress</i> and hands each out as a {@link TaskClaim}: a lease
 * with a fencing token and an expiry. The worker then {@linkplain #complete completes},
 * {@linkplain #fail fails} (one retry less; none left → dead) or {@linkplain #release releases}
 * (capturable again, no retry used) it, renewing the claim meanwhile ({@link #renew},
 * {@link #hold}) — or lets {@link #withClaim} do all of that around its work.
 *
 * <pre>{@code
 * RedisTaskQueue tasks = RedisTaskQueue.create(backend, LockOptions.builder().leaseTime(Duration.ofMinutes(1)).build());
 * tasks.register("emails", "welcome:42", 3).subscribe();
 * tasks.capture("emails")                                    // demand-driven: at most 8 claims at a time here
 *      .flatMap(claim -> tasks.withClaim(claim, c -> send(c.taskId(), c.token())), 8)
 *      .subscribe();
 * }</pre>
 *
 * <p><b>No sweeper.</b> A claim whose expiry passed (its worker crashed, paused or lost the
 * network) is simply capturable again: the capture script takes expired claims first, then
 * pending tasks in registration order. The new claim carries a higher token, and the old claim
 * can no longer complete, fail or release the task. Until someone recaptures it, an expired claim
 * may still complete, fail or release (nobody else can have worked on the task); it can no longer
 * be renewed. An expiry does not use a retry; {@link TaskClaim#attempt()} counts captures.
 *
 * <p><b>Timing</b> comes from {@link LockOptions}: the lease time is the claim time, the renewal
 * interval paces {@link #hold}, the backoff paces an idle capturer's re-checks and its retries of
 * transient failures, the request timeout bounds each call, the drift allowance shortens
 * {@link TaskClaim#validUntilNanos()}, and the scheduler (Reactor's parallel scheduler when
 * {@code null}) runs the timers. The server's clock alone decides expiry.
 *
 * <p>Keys of a queue share its Redis Cluster hash tag (see {@link RedisKeys}); the queue name and
 * task ids are data, never patterns. Every method is lazy and non-blocking and checks its
 * arguments at call time; failures are {@link LockBackendException}s whose {@code lockName()}
 * is the queue. A queue client lives as long as the {@link RedisLockBackend} it uses (same
 * connections, same key prefix).
 */
public final class RedisTaskQueue {

    static {
        GrantRequest.newOwner(); // seeds the owner-id generator on the thread creating the store, not on an event loop
    }

    /** The most tasks one capture script call takes, however large the demand. */
    public static final int MAX_CAPTURE_PER_CALL = 500;

    /** The most task ids one registration script call carries. */
    static final int MAX_REGISTER_PER_CALL = 1000;

    private final RedisLockBackend backend;
    private final LockOptions options;
    private final Scheduler scheduler;
    private final String claimMs;

    private RedisTaskQueue(RedisLockBackend backend, LockOptions options) {
        this.backend = backend;
        this.options = options;
        this.scheduler = options.scheduler() != null ? options.scheduler() : Schedulers.parallel();
        this.claimMs = RedisLockBackend.millis(options.leaseTime());
    }

    /**
     * @param backend the backend whose connections and key prefix to use
     * @return a task queue client with {@link LockOptions#defaults()} (claims of 30 s)
     */
    public static RedisTaskQueue create(RedisLockBackend backend) {
        return create(backend, LockOptions.defaults());
    }

    /**
     * @param backend the backend whose connections and key prefix to use
     * @param options claim time (the lease time), renewal interval, backoff, request timeout,
     *                drift, clock and scheduler (see the class documentation)
     * @return a task queue client
     */
    public static RedisTaskQueue create(RedisLockBackend backend, LockOptions options) {
        return new RedisTaskQueue(Objects.requireNonNull(backend, "backend"), Objects.requireNonNull(options, "options"));
    }

    /** @return the timing of this queue client */
    public LockOptions options() {
        return options;
    }

    // ---- registration

    /**
     * Registers one task as pending. One script call per subscription; a task id the queue
     * already knows (in any state, done and dead included) is left as it is.
     *
     * @param queue   the queue name: non-empty, at most 1024 UTF-8 bytes
     * @param taskId  the task id: non-empty, at most 1024 UTF-8 bytes, any characters
     * @param retries how many failures are retried before the task is dead, at least 0
     * @return {@code true} when the task was new, {@code false} when the queue knew it already
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is empty or too long, or retries is negative
     */
    public Mono<Boolean> register(String queue, String taskId, int retries) {
        LockNames.check(taskId, "taskId");
        return registerAll(queue, List.of(taskId), retries).map(n -> n == 1);
    }

    /**
     * Registers many tasks as pending, in their iteration order, with one script call per
     * {@value #MAX_REGISTER_PER_CALL} ids. Ids the queue already knows are left as they are.
     * Capturers waiting on the queue are woken.
     *
     * @param queue   the queue name
     * @param taskIds the task ids (copied at call time)
     * @param retries how many failures of each are retried before it is dead, at least 0
     * @return how many tasks were new
     * @throws NullPointerException     when an argument or an id is null
     * @throws IllegalArgumentException when a name or id is empty or too long, or retries is negative
     */
    public Mono<Integer> registerAll(String queue, Collection<String> taskIds, int retries) {
        LockNames.check(queue, "queue");
        Objects.requireNonNull(taskIds, "taskIds");
        if (retries < 0) {
            throw new IllegalArgumentException("retries must be at least 0, was " + retries);
        }
        List<String> encoded = new ArrayList<>(taskIds.size());
        for (String id : taskIds) {
            encoded.add(RedisKeys.tag(LockNames.check(id, "taskId")));
        }
        String[] k = {backend.keys().tasks(queue), backend.keys().pending(queue)};
        String channel = backend.keys().queueChannel(queue);
        return Flux.range(0, (encoded.size() + MAX_REGISTER_PER_CALL - 1) / MAX_REGISTER_PER_CALL)
                .concatMap(chunk -> {
                    List<String> ids = encoded.subList(chunk * MAX_REGISTER_PER_CALL,
                            Math.min(encoded.size(), (chunk + 1) * MAX_REGISTER_PER_CALL));
                    List<String> a = new ArrayList<>(ids.size() + 2);
                    a.add(Integer.toString(retries));
                    a.add(channel);
                    a.addAll(ids);
                    return call(queue, "task registration", LuaScript.TASK_REGISTER, ScriptOutputType.INTEGER, k,
                            a.toArray(new String[0]));
                })
                .reduce(0, (sum, added) -> sum + ((Number) added).intValue());
    }

    // ---- capture

    /**
     * Captures tasks of {@code queue} as they become capturable, driven by demand: each
     * {@code request(n)} lets the next script call capture up to {@code n} tasks (at most
     * {@value #MAX_CAPTURE_PER_CALL} per call) and the stream never captures more than was
     * requested. One call is in flight at a time. When the queue has nothing capturable, the
     * capture waits for the first of: a "tasks ready" message on the queue's channel (register,
     * fail with retries left, release), the earliest claim expiry the server reported, and the next
     * backoff step — then tries again; the channel's (re)subscription also triggers a re-check.
     *
     * <p>Never completes by itself (until the backend closes); transient failures are retried with
     * the backoff within its attempt bound, after which — or on a permanent failure — the stream
     * errors with a {@link LockBackendException}. Cancelling stops capturing: claims already
     * delivered stay the subscriber's; claims whose capture was in flight are released when it
     * answers. Signals arrive on Lettuce's I/O threads or the queue's scheduler.
     *
     * @param queue the queue name
     * @return the claims
     * @throws NullPointerException     when queue is null
     * @throws IllegalArgumentException when the name is empty or too long
     */
    public Flux<TaskClaim> capture(String queue) {
        LockNames.check(queue, "queue");
        return new Flux<>() {
            @Override
            public void subscribe(CoreSubscriber<? super TaskClaim> actual) {
                TaskCapture op = new TaskCapture(RedisTaskQueue.this, queue, Long.MAX_VALUE, true, actual);
                actual.onSubscribe(op);
            }
        };
    }

    /**
     * Captures what is capturable now, up to {@code limit} tasks, never more than requested: one
     * script call per request round (several only when demand arrives in parts or the limit
     * exceeds {@value #MAX_CAPTURE_PER_CALL}); completes when the limit is reached or a call found
     * fewer tasks than it asked for. Errors at once, with a {@link LockBackendException}, when a
     * call fails. Cancelling releases the claims of a call still in flight.
     *
     * @param queue the queue name
     * @param limit the most tasks to capture, at least 1
     * @return the claims
     * @throws NullPointerException     when queue is null
     * @throws IllegalArgumentException when the name is empty or too long, or limit is below 1
     */
    public Flux<TaskClaim> tryCapture(String queue, int limit) {
        LockNames.check(queue, "queue");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        return new Flux<>() {
            @Override
            public void subscribe(CoreSubscriber<? super TaskClaim> actual) {
                TaskCapture op = new TaskCapture(RedisTaskQueue.this, queue, limit, false, actual);
                actual.onSubscribe(op);
            }
        };
    }

    // ---- claims

    /**
     * Extends a claim that has not expired yet to the claim time from now (owner and token
     * checked). One script call per subscription.
     *
     * @param claim the claim
     * @return the claim with its new local deadline; empty when it expired, was recaptured or ended
     * @throws NullPointerException when claim is null
     */
    public Mono<TaskClaim> renew(TaskClaim claim) {
        Objects.requireNonNull(claim, "claim");
        return Mono.defer(() -> {
            long sentAt = options.clock().nanoTime(); // before any lazy connect: conservative
            return call(claim.queue(), "claim renewal", LuaScript.TASK_RENEW, ScriptOutputType.INTEGER,
                    new String[] {backend.keys().tasks(claim.queue()), backend.keys().claimed(claim.queue())},
                    RedisKeys.tag(claim.taskId()), Long.toString(claim.token()), claim.owner(), claimMs)
                    .filter(r -> Long.valueOf(1L).equals(r))
                    .map(r -> claim.withValidUntil(sentAt + options.validityNanos(options.leaseTime())));
        });
    }

    /**
     * Keeps a claim alive like a lock's hold stream: renews it every renewal interval and emits
     * the renewed claim; completes when the claim is lost — the server said it is not held any
     * more, or its local deadline passed without a confirmed renewal (transient failures are
     * retried with the backoff until then). Cancelling stops the renewals; it does not release.
     *
     * @param claim the claim
     * @return the renewed claims
     * @throws NullPointerException when claim is null
     */
    public Flux<TaskClaim> hold(TaskClaim claim) {
        Objects.requireNonNull(claim, "claim");
        return Mono.just(claim)
                .expand(c -> Mono.delay(options.renewalInterval(), scheduler).then(renewWhileValid(c)))
                .skip(1);
    }

    private Mono<TaskClaim> renewWhileValid(TaskClaim c) {
        return Mono.defer(() -> {
            long left = c.validUntilNanos() - options.clock().nanoTime();
            if (left <= 0) {
                return Mono.empty();
            }
            return renew(c)
                    .retryWhen(Retry.from(signals -> signals.concatMap(s -> isTransient(s.failure())
                            ? Mono.delay(Duration.ofNanos(backoffNanos(s.totalRetries() + 1)), scheduler)
                            : Mono.error(s.failure()))))
                    .timeout(Duration.ofNanos(left), Mono.empty(), scheduler)
                    .onErrorResume(e -> Mono.empty());
        });
    }

    /**
     * Marks the task done, if the claim still holds it (see the class documentation). One script
     * call per subscription.
     *
     * @param claim the claim
     * @return {@code true} when the task is now done, {@code false} when the claim no longer holds it
     * @throws NullPointerException when claim is null
     */
    public Mono<Boolean> complete(TaskClaim claim) {
        return finish(claim, "complete").map(r -> r == 1L);
    }

    /**
     * Fails the claimed task: with retries left it is capturable again with one retry less
     * (state {@link TaskState#FAILED}), else it is {@link TaskState#DEAD}, kept for inspection.
     * One script call per subscription.
     *
     * @param claim the claim
     * @return {@code true} when the failure was recorded, {@code false} when the claim no longer holds the task
     * @throws NullPointerException when claim is null
     */
    public Mono<Boolean> fail(TaskClaim claim) {
        return finish(claim, "fail").map(r -> r != 0L);
    }

    /**
     * Gives the task back: capturable again at once, no retry used. One script call per
     * subscription.
     *
     * @param claim the claim
     * @return {@code true} when released, {@code false} when the claim no longer held the task
     * @throws NullPointerException when claim is null
     */
    public Mono<Boolean> release(TaskClaim claim) {
        return finish(claim, "release").map(r -> r == 1L);
    }

    private Mono<Long> finish(TaskClaim claim, String how) {
        Objects.requireNonNull(claim, "claim");
        String q = claim.queue();
        return Mono.defer(() -> call(q, "task " + how, LuaScript.TASK_FINISH, ScriptOutputType.INTEGER,
                new String[] {backend.keys().tasks(q), backend.keys().pending(q), backend.keys().claimed(q)},
                RedisKeys.tag(claim.taskId()), Long.toString(claim.token()), claim.owner(), how,
                backend.keys().queueChannel(q))
                .map(r -> ((Number) r).longValue()));
    }

    /**
     * Runs {@code body} under the claim, like {@code LockClient.withLock}: the claim is renewed
     * while the body runs ({@link #hold}); when the body succeeds the task is completed, when it
     * errors the task is failed (and the body's error is signalled), when the subscriber cancels
     * the task is released. If the claim is lost while the body runs, the body is cancelled and
     * the result is a {@link LockLostException} (for the queue, with the claim's token); the same
     * when the claim was lost by the time the body succeeded (the work may be repeated by another
     * capturer, with a higher token).
     *
     * @param claim the claim, as just captured
     * @param body  the work; its value (if any) is the result
     * @param <T>   the result type
     * @return the body's result once the task is done
     * @throws NullPointerException when an argument is null
     */
    public <T> Mono<T> withClaim(TaskClaim claim, Function<? super TaskClaim, ? extends Mono<T>> body) {
        Objects.requireNonNull(claim, "claim");
        Objects.requireNonNull(body, "body");
        return Mono.defer(() -> {
            Mono<T> lost = hold(claim).then(Mono.error(() -> lost(claim, "the claim expired or was taken over while the work ran")));
            return Mono.usingWhen(Mono.just(claim),
                    c -> Mono.firstWithSignal(Mono.defer(() -> body.apply(c)), lost),
                    c -> complete(c).flatMap(ok -> ok ? Mono.<Void>empty()
                            : Mono.error(lost(c, "the claim was lost before the task could be completed"))),
                    (c, e) -> (e instanceof LockLostException ? release(c) : fail(c)).onErrorResume(x -> Mono.empty()).then(),
                    c -> release(c).onErrorResume(x -> Mono.empty()).then());
        });
    }

    private static LockLostException lost(TaskClaim c, String why) {
        return new LockLostException(c.queue(), c.token(), "task '" + c.taskId() + "': " + why);
    }

    // ---- inspection

    /**
     * Reads one task.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return the task's status; empty when the queue does not know it
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is empty or too long
     */
    public Mono<TaskStatus> status(String queue, String taskId) {
        LockNames.check(queue, "queue");
        LockNames.check(taskId, "taskId");
        return Mono.defer(() -> call(queue, "task status", LuaScript.TASK_STATUS, ScriptOutputType.MULTI,
                new String[] {backend.keys().tasks(queue), backend.keys().claimed(queue)}, RedisKeys.tag(taskId)))
                .flatMap(reply -> {
                    List<?> r = (List<?>) reply;
                    if (r.isEmpty()) {
                        return Mono.empty();
                    }
                    String s = String.valueOf(r.get(0));
                    int retries = Integer.parseInt(String.valueOf(r.get(1)));
                    int failures = Integer.parseInt(String.valueOf(r.get(2)));
                    TaskState state = switch (s) {
                        case "c" -> TaskState.IN_PROGRESS;
                        case "d" -> TaskState.DONE;
                        case "x" -> TaskState.DEAD;
                        default -> failures > 0 ? TaskState.FAILED : TaskState.PENDING;
                    };
                    long remaining = ((Number) r.get(5)).longValue();
                    return Mono.just(new TaskStatus(queue, taskId, state, retries, failures,
                            Long.parseLong(String.valueOf(r.get(3))), Long.parseLong(String.valueOf(r.get(4))),
                            remaining > 0 ? Duration.ofMillis(remaining) : null));
                });
    }

    /**
     * Forgets a task in any state (done and dead tasks stay until removed). A claim on it can no
     * longer complete, fail or release it.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return {@code true} when the queue knew the task
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is empty or too long
     */
    public Mono<Boolean> remove(String queue, String taskId) {
        LockNames.check(queue, "queue");
        LockNames.check(taskId, "taskId");
        return Mono.defer(() -> call(queue, "task removal", LuaScript.TASK_REMOVE, ScriptOutputType.INTEGER,
                new String[] {backend.keys().tasks(queue), backend.keys().pending(queue), backend.keys().claimed(queue)},
                RedisKeys.tag(taskId)))
                .map(r -> Long.valueOf(1L).equals(r));
    }

    // ---- for TaskCapture

    /** One capture script call: the reply as a list, see task-capture.lua. */
    Mono<List<?>> captureCall(String queue, String owner, int limit) {
        RedisKeys keys = backend.keys();
        return call(queue, "task capture", LuaScript.TASK_CAPTURE, ScriptOutputType.MULTI,
                new String[] {keys.tasks(queue), keys.pending(queue), keys.claimed(queue), keys.queueFence(queue)},
                owner, Integer.toString(limit), claimMs, backend.fenceTtlMs())
                .map(reply -> (List<?>) reply);
    }

    /** The claims of a capture reply, timed from {@code sentAt}. */
    List<TaskClaim> claims(String queue, String owner, List<?> reply, long sentAt) {
        long validUntil = sentAt + options.validityNanos(Duration.ofMillis(Long.parseLong(String.valueOf(reply.get(0)))));
        List<TaskClaim> out = new ArrayList<>((reply.size() - 2) / 4);
        for (int i = 2; i + 3 < reply.size(); i += 4) {
            out.add(new TaskClaim(queue, RedisKeys.untag(String.valueOf(reply.get(i))), owner,
                    Long.parseLong(String.valueOf(reply.get(i + 1))), Integer.parseInt(String.valueOf(reply.get(i + 2))),
                    Long.parseLong(String.valueOf(reply.get(i + 3))), validUntil));
        }
        return out;
    }

    Flux<io.reactivelocks.spi.LockEvent> events(String queue) {
        return backend.queueEvents(queue);
    }

    Scheduler scheduler() {
        return scheduler;
    }

    /**
     * @param attempt 1 for the first wait
     * @return the backoff's delay for that attempt: {@code min(max, min·2^(attempt−1))}, with its jitter
     */
    long backoffNanos(long attempt) {
        return io.reactivelocks.spi.Backoff.delayNanos(options.backoff(), attempt);
    }

    static boolean isTransient(Throwable t) {
        return io.reactivelocks.spi.BackendErrors.isTransient(t);
    }

    private Mono<Object> call(String queue, String operation, LuaScript script, ScriptOutputType type, String[] k,
                              String... a) {
        return backend.script(script, type, k, a)
                .timeout(options.requestTimeout(), scheduler)
                .onErrorMap(e -> RedisErrors.mapQueue(queue, operation, e));
    }

    @Override
    public String toString() {
        return "RedisTaskQueue{" + backend + ", " + options + "}";
    }
}
