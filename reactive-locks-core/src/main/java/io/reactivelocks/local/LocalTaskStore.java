package io.reactivelocks.local;

import io.reactivelocks.LockClock;
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
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * An in-memory {@link TaskStore}: what a server would hold for task queues, inside one JVM, for
 * tests and local development. Any number of {@link io.reactivelocks.task.TaskQueue}s (one per
 * simulated worker) may share one store. Expiry is decided by the store's own {@link LockClock}
 * when a capture, renewal or read looks at a claim — inject {@code LockClock.of(virtualTimeScheduler)}
 * to drive it in tests; nothing runs on timers. Tokens come from one counter per store, so they
 * increase across every queue. All operations are short critical sections on in-memory maps;
 * nothing blocks. {@link #close()} closes nothing (the state outlives the queues that share it).
 *
 * <pre>{@code
 * TaskQueue tasks = TaskQueue.create(new LocalTaskStore());
 * }</pre>
 */
public final class LocalTaskStore implements TaskStore {

    private final LockClock clock;
    private final Map<String, Map<String, Task>> queues = new HashMap<>(); // guarded by this
    private final ConcurrentHashMap<String, Channel> channels = new ConcurrentHashMap<>();
    private long tokens;   // guarded by this
    private long sequence; // guarded by this: registration order within one clock reading

    /** A store on the JVM's monotonic clock. */
    public LocalTaskStore() {
        this(LockClock.system());
    }

    /** @param clock decides expiry (the "server clock") */
    public LocalTaskStore(LockClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** One task as the store holds it. */
    private static final class Task {
        final @Nullable String payload;
        TaskState state = TaskState.PENDING; // IN_PROGRESS stays until captured again, even after expiry
        int retriesLeft;
        int attempts;
        long token;
        @Nullable String owner;
        long expiresAt;  // while in progress
        long readyAt;    // capture order: when it became capturable, or its claim's expiry
        long order;      // tie-break of readyAt

        Task(@Nullable String payload, int retries) {
            this.payload = payload;
            this.retriesLeft = retries;
        }

        boolean capturable(long now) {
            return state == TaskState.PENDING || state == TaskState.FAILED
                    || (state == TaskState.IN_PROGRESS && expiresAt - now <= 0);
        }

        boolean heldBy(ClaimRef c) {
            return state == TaskState.IN_PROGRESS && token == c.token() && c.owner().equals(owner);
        }
    }

    @Override
    public String name() {
        return "local";
    }

    @Override
    public Mono<Integer> register(String queue, List<NewTask> tasks, int retries) {
        return Mono.fromSupplier(() -> {
            int added = 0;
            synchronized (this) {
                Map<String, Task> q = queues.computeIfAbsent(queue, k -> new HashMap<>());
                long now = clock.nanoTime();
                for (NewTask t : tasks) {
                    if (!q.containsKey(t.taskId())) {
                        Task task = new Task(t.payload(), retries);
                        ready(task, now);
                        q.put(t.taskId(), task);
                        added++;
                    }
                }
            }
            if (added > 0) {
                wake(queue);
            }
            return added;
        });
    }

    @Override
    public Mono<Capture> capture(String queue, String owner, int limit, Duration claimTime) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                long now = clock.nanoTime();
                Map<String, Task> q = queues.getOrDefault(queue, Map.of());
                List<Map.Entry<String, Task>> capturable = new ArrayList<>();
                for (Map.Entry<String, Task> e : q.entrySet()) {
                    if (e.getValue().capturable(now)) {
                        capturable.add(e);
                    }
                }
                capturable.sort(Comparator.comparingLong((Map.Entry<String, Task> e) -> e.getValue().readyAt - now)
                        .thenComparingLong(e -> e.getValue().order));
                List<CapturedTask> out = new ArrayList<>();
                for (int i = 0; i < capturable.size() && i < limit; i++) {
                    Task t = capturable.get(i).getValue();
                    t.state = TaskState.IN_PROGRESS;
                    t.owner = owner;
                    t.token = ++tokens;
                    t.attempts++;
                    t.expiresAt = now + claimTime.toNanos();
                    t.readyAt = t.expiresAt;
                    out.add(new CapturedTask(capturable.get(i).getKey(), t.token, t.attempts, t.retriesLeft, t.payload));
                }
                Duration next = null;
                if (out.size() < limit) {
                    long earliest = Long.MAX_VALUE;
                    for (Task t : q.values()) {
                        if (t.state == TaskState.IN_PROGRESS && t.expiresAt - now > 0) {
                            earliest = Math.min(earliest, t.expiresAt - now);
                        }
                    }
                    next = earliest == Long.MAX_VALUE ? null : Duration.ofNanos(earliest);
                }
                return new Capture(out, claimTime, next);
            }
        });
    }

    @Override
    public Mono<List<Boolean>> renew(String queue, List<ClaimRef> claims, Duration claimTime) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                long now = clock.nanoTime();
                List<Boolean> out = new ArrayList<>(claims.size());
                for (ClaimRef c : claims) {
                    Task t = task(queue, c.taskId());
                    boolean ok = t != null && t.heldBy(c) && t.expiresAt - now > 0;
                    if (ok) {
                        t.expiresAt = now + claimTime.toNanos();
                        t.readyAt = t.expiresAt;
                    }
                    out.add(ok);
                }
                return out;
            }
        });
    }

    @Override
    public Mono<Boolean> complete(String queue, ClaimRef claim) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                Task t = task(queue, claim.taskId());
                if (t == null || !t.heldBy(claim)) {
                    return false;
                }
                t.state = TaskState.DONE;
                return true;
            }
        });
    }

    @Override
    public Mono<Boolean> fail(String queue, ClaimRef claim) {
        return Mono.fromSupplier(() -> {
            boolean capturable;
            synchronized (this) {
                Task t = task(queue, claim.taskId());
                if (t == null || !t.heldBy(claim)) {
                    return false;
                }
                capturable = t.retriesLeft > 0;
                if (capturable) {
                    t.retriesLeft--;
                    t.state = TaskState.FAILED;
                    ready(t, clock.nanoTime());
                } else {
                    t.state = TaskState.DEAD;
                }
            }
            if (capturable) {
                wake(queue);
            }
            return true;
        });
    }

    @Override
    public Mono<Integer> release(String queue, List<ClaimRef> claims) {
        return Mono.fromSupplier(() -> {
            int released = 0;
            synchronized (this) {
                long now = clock.nanoTime();
                for (ClaimRef c : claims) {
                    Task t = task(queue, c.taskId());
                    if (t != null && t.heldBy(c)) {
                        t.state = TaskState.PENDING;
                        ready(t, now);
                        released++;
                    }
                }
            }
            if (released > 0) {
                wake(queue);
            }
            return released;
        });
    }

    @Override
    public Mono<Integer> releaseOwner(String queue, String owner) {
        return Mono.fromSupplier(() -> {
            List<ClaimRef> mine = new ArrayList<>();
            synchronized (this) {
                queues.getOrDefault(queue, Map.of()).forEach((id, t) -> {
                    if (t.state == TaskState.IN_PROGRESS && owner.equals(t.owner)) {
                        mine.add(new ClaimRef(id, owner, t.token));
                    }
                });
            }
            return mine;
        }).flatMap(mine -> mine.isEmpty() ? Mono.just(0) : release(queue, mine));
    }

    @Override
    public Mono<TaskStatus> status(String queue, String taskId) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                Task t = task(queue, taskId);
                if (t == null) {
                    return null;
                }
                long now = clock.nanoTime();
                TaskState state = t.state;
                Duration remaining = null;
                if (state == TaskState.IN_PROGRESS) {
                    if (t.expiresAt - now > 0) {
                        remaining = Duration.ofNanos(t.expiresAt - now);
                    } else {
                        state = TaskState.PENDING;
                    }
                }
                return new TaskStatus(queue, taskId, state, t.retriesLeft, t.attempts, t.token, t.owner, remaining,
                        t.payload);
            }
        });
    }

    @Override
    public Flux<HeldClaim> claims(String queue) {
        return Flux.defer(() -> {
            List<HeldClaim> out = new ArrayList<>();
            synchronized (this) {
                Map<String, Task> q = queues.get(queue);
                long now = clock.nanoTime();
                if (q != null) {
                    q.forEach((id, t) -> {
                        if (t.state == TaskState.IN_PROGRESS && t.expiresAt - now > 0 && t.owner != null) {
                            out.add(new HeldClaim(id, t.owner, t.token, Duration.ofNanos(t.expiresAt - now)));
                        }
                    });
                }
            }
            return Flux.fromIterable(out);
        });
    }

    /**
     * @param prefix the start of the queue names
     * @return the queues with live claims whose name starts with {@code prefix}
     */
    public synchronized List<String> claimedQueues(String prefix) {
        long now = clock.nanoTime();
        List<String> out = new ArrayList<>();
        queues.forEach((name, q) -> {
            if (name.startsWith(prefix) && q.values().stream().anyMatch(t -> t.state == TaskState.IN_PROGRESS && t.expiresAt - now > 0)) {
                out.add(name);
            }
        });
        return out;
    }

    @Override
    public Mono<Boolean> remove(String queue, String taskId) {
        return Mono.fromSupplier(() -> {
            synchronized (this) {
                Map<String, Task> q = queues.get(queue);
                boolean had = q != null && q.remove(taskId) != null;
                if (q != null && q.isEmpty()) {
                    queues.remove(queue);
                }
                return had;
            }
        });
    }

    @Override
    public Flux<TaskWakeUp> wakeUps(String queue) {
        return Flux.defer(() -> {
            Channel channel = channels.computeIfAbsent(queue, Channel::new);
            return channel.sink.asFlux().startWith(new TaskWakeUp(queue, true)).doFinally(s -> {
                if (channel.sink.currentSubscriberCount() == 0) {
                    channels.remove(queue, channel);
                }
            });
        });
    }

    /** @return how many tasks the store holds in all queues, in any state */
    public synchronized int size() {
        int n = 0;
        for (Map<String, Task> q : queues.values()) {
            n += q.size();
        }
        return n;
    }

    @Override
    public Mono<Void> close() {
        return Mono.empty();
    }

    // guarded by this
    private @Nullable Task task(String queue, String taskId) {
        Map<String, Task> q = queues.get(queue);
        return q == null ? null : q.get(taskId);
    }

    // guarded by this
    private void ready(Task t, long now) {
        t.expiresAt = 0;
        t.readyAt = now;
        t.order = ++sequence;
    }

    private void wake(String queue) {
        Channel channel = channels.get(queue);
        if (channel != null) {
            channel.signal();
        }
    }

    /**
     * The wake-ups of one queue. Emissions are serialized by a work-in-progress counter: a wake-up
     * raised while another is being delivered — from another thread, or re-entrantly by a capturer
     * that reacts to it on the same thread — is emitted by the thread already emitting, never lost.
     */
    private static final class Channel {
        final Sinks.Many<TaskWakeUp> sink = Sinks.many().multicast().directBestEffort();
        final AtomicInteger wip = new AtomicInteger();
        final TaskWakeUp wakeUp;

        Channel(String queue) {
            this.wakeUp = new TaskWakeUp(queue, false);
        }

        void signal() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                sink.tryEmitNext(wakeUp); // no subscriber: nobody waits
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }

    @Override
    public String toString() {
        return "LocalTaskStore";
    }
}
