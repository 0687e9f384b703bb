package io.reactivelocks.redis;

import io.lettuce.core.ScriptOutputType;
import io.reactivelocks.LockBackendException;
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
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The {@link TaskStore} on Redis: one Lua script per operation (see {@code task-*.lua}), all keys
 * of a queue under its Redis Cluster hash tag ({@link RedisKeys}). A capture is one script call that
 * takes expired claims first, then pending and failed tasks in the order they became capturable;
 * tokens are {@code max(counter + 1, server TIME in µs)}, strictly increasing per queue also across
 * a restart that lost the counter. The server's clock alone decides expiry. Wake-ups are the
 * queue's pub/sub channel on the backend's shared pub/sub connection. Task ids and payloads are
 * stored in the injective ASCII encoding of {@link RedisKeys#tag}, so any string round-trips.
 *
 * <p>After every task of a queue is removed, only the queue's fencing counter stays, expiring after
 * {@link RedisLockOptions#fenceTtl()}.
 */
final class RedisTaskStore implements TaskStore {

    private final RedisLockBackend backend;
    private final boolean ownsBackend;

    /**
     * @param backend     the backend whose connections and key prefix to use
     * @param ownsBackend whether {@link #close()} closes the backend
     */
    RedisTaskStore(RedisLockBackend backend, boolean ownsBackend) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.ownsBackend = ownsBackend;
    }

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public Mono<Integer> register(String queue, List<NewTask> tasks, int retries) {
        RedisKeys k = backend.keys();
        List<String> a = new ArrayList<>(tasks.size() * 2 + 2);
        a.add(Integer.toString(retries));
        a.add(k.queueChannel(queue));
        for (NewTask t : tasks) {
            a.add(RedisKeys.tag(t.taskId()));
            a.add(t.payload() == null ? "-" : "+" + RedisKeys.tag(t.payload()));
        }
        return call(queue, "task registration", LuaScript.TASK_REGISTER, ScriptOutputType.INTEGER,
                new String[] {k.tasks(queue), k.pending(queue), k.payloads(queue)}, a.toArray(new String[0]))
                .map(r -> ((Number) r).intValue());
    }

    @Override
    public Mono<Capture> capture(String queue, String owner, int limit, Duration claimTime) {
        RedisKeys k = backend.keys();
        return call(queue, "task capture", LuaScript.TASK_CAPTURE, ScriptOutputType.MULTI,
                new String[] {k.tasks(queue), k.pending(queue), k.claimed(queue), k.queueFence(queue), k.payloads(queue)},
                owner, Integer.toString(limit), RedisLockBackend.millis(claimTime), backend.fenceTtlMs())
                .map(reply -> toCapture(queue, (List<?>) reply));
    }

    private static Capture toCapture(String queue, List<?> reply) {
        try {
            Duration claim = Duration.ofMillis(Long.parseLong(String.valueOf(reply.get(0))));
            long hintMs = ((Number) reply.get(1)).longValue();
            List<CapturedTask> tasks = new ArrayList<>((reply.size() - 2) / 5);
            for (int i = 2; i + 4 < reply.size(); i += 5) {
                tasks.add(new CapturedTask(RedisKeys.untag(String.valueOf(reply.get(i))),
                        Long.parseLong(String.valueOf(reply.get(i + 1))),
                        Integer.parseInt(String.valueOf(reply.get(i + 3))),
                        Integer.parseInt(String.valueOf(reply.get(i + 2))),
                        payload(String.valueOf(reply.get(i + 4)))));
            }
            return new Capture(tasks, claim, hintMs >= 0 ? Duration.ofMillis(hintMs) : null);
        } catch (RuntimeException e) {
            throw new LockBackendException(queue, "unexpected reply to the capture of task queue '" + queue + "': "
                    + reply, e, false);
        }
    }

    @Override
    public Mono<List<Boolean>> renew(String queue, List<ClaimRef> claims, Duration claimTime) {
        RedisKeys k = backend.keys();
        List<String> a = new ArrayList<>(claims.size() * 3 + 1);
        a.add(RedisLockBackend.millis(claimTime));
        for (ClaimRef c : claims) {
            a.add(RedisKeys.tag(c.taskId()));
            a.add(Long.toString(c.token()));
            a.add(c.owner());
        }
        return call(queue, "claim renewal", LuaScript.TASK_RENEW, ScriptOutputType.MULTI,
                new String[] {k.tasks(queue), k.claimed(queue)}, a.toArray(new String[0]))
                .map(reply -> {
                    List<Boolean> out = new ArrayList<>(claims.size());
                    for (Object r : (List<?>) reply) {
                        out.add(((Number) r).longValue() == 1L);
                    }
                    return out;
                });
    }

    @Override
    public Mono<Boolean> complete(String queue, ClaimRef claim) {
        return finish(queue, claim, "complete").map(r -> r == 1L);
    }

    @Override
    public Mono<Boolean> fail(String queue, ClaimRef claim) {
        return finish(queue, claim, "fail").map(r -> r != 0L);
    }

    @Override
    public Mono<Integer> release(String queue, List<ClaimRef> claims) {
        return Flux.fromIterable(claims)
                .concatMap(c -> finish(queue, c, "release"))
                .reduce(0, (n, r) -> n + (r == 1L ? 1 : 0));
    }

    private Mono<Long> finish(String queue, ClaimRef claim, String how) {
        RedisKeys k = backend.keys();
        return call(queue, "task " + how, LuaScript.TASK_FINISH, ScriptOutputType.INTEGER,
                new String[] {k.tasks(queue), k.pending(queue), k.claimed(queue)},
                RedisKeys.tag(claim.taskId()), Long.toString(claim.token()), claim.owner(), how, k.queueChannel(queue))
                .map(r -> ((Number) r).longValue());
    }

    @Override
    public Mono<TaskStatus> status(String queue, String taskId) {
        RedisKeys k = backend.keys();
        return call(queue, "task status", LuaScript.TASK_STATUS, ScriptOutputType.MULTI,
                new String[] {k.tasks(queue), k.claimed(queue), k.payloads(queue)}, RedisKeys.tag(taskId))
                .flatMap(reply -> {
                    List<?> r = (List<?>) reply;
                    if (r.isEmpty()) {
                        return Mono.empty();
                    }
                    TaskState state = switch (String.valueOf(r.get(0))) {
                        case "c" -> TaskState.IN_PROGRESS;
                        case "d" -> TaskState.DONE;
                        case "x" -> TaskState.DEAD;
                        case "f" -> TaskState.FAILED;
                        default -> TaskState.PENDING;
                    };
                    long remaining = ((Number) r.get(5)).longValue();
                    String owner = String.valueOf(r.get(7));
                    return Mono.just(new TaskStatus(queue, taskId, state, Integer.parseInt(String.valueOf(r.get(1))),
                            Integer.parseInt(String.valueOf(r.get(3))), Long.parseLong(String.valueOf(r.get(4))),
                            owner.isEmpty() ? null : owner, remaining > 0 ? Duration.ofMillis(remaining) : null,
                            payload(String.valueOf(r.get(6)))));
                });
    }

    /** One read-only script ({@code task-claims.lua}): the claims whose expiry is ahead by the server's clock. */
    @Override
    public Flux<HeldClaim> claims(String queue) {
        RedisKeys k = backend.keys();
        return call(queue, "task claims", LuaScript.TASK_CLAIMS, ScriptOutputType.MULTI, new String[] {k.tasks(queue), k.claimed(queue)})
                .flatMapIterable(reply -> {
                    List<?> r = (List<?>) reply;
                    List<HeldClaim> out = new ArrayList<>(r.size() / 4);
                    for (int i = 0; i + 3 < r.size(); i += 4) {
                        out.add(new HeldClaim(RedisKeys.untag(String.valueOf(r.get(i))), String.valueOf(r.get(i + 2)),
                                Long.parseLong(String.valueOf(r.get(i + 1))), Duration.ofMillis(((Number) r.get(i + 3)).longValue())));
                    }
                    return out;
                });
    }

    @Override
    public Mono<Boolean> remove(String queue, String taskId) {
        RedisKeys k = backend.keys();
        return call(queue, "task removal", LuaScript.TASK_REMOVE, ScriptOutputType.INTEGER,
                new String[] {k.tasks(queue), k.pending(queue), k.claimed(queue), k.payloads(queue)}, RedisKeys.tag(taskId))
                .map(r -> Long.valueOf(1L).equals(r));
    }

    @Override
    public Flux<TaskWakeUp> wakeUps(String queue) {
        return backend.queueEvents(queue).map(e -> new TaskWakeUp(queue, e instanceof LockEvent.Subscribed));
    }

    @Override
    public Mono<Void> close() {
        return ownsBackend ? backend.close() : Mono.empty();
    }

    private static @Nullable String payload(String stored) {
        return stored.startsWith("+") ? RedisKeys.untag(stored.substring(1)) : null;
    }

    private Mono<Object> call(String queue, String operation, LuaScript script, ScriptOutputType type, String[] k,
                              String... a) {
        return Mono.defer(() -> backend.script(script, type, k, a))
                .onErrorMap(e -> RedisErrors.mapQueue(queue, operation, e));
    }

    @Override
    public String toString() {
        return "RedisTaskStore{" + backend + "}";
    }
}
