package io.reactivelocks.local;

import io.reactivelocks.spi.task.Capture;
import io.reactivelocks.spi.task.CapturedTask;
import io.reactivelocks.spi.task.ClaimRef;
import io.reactivelocks.spi.task.NewTask;
import io.reactivelocks.task.TaskState;
import io.reactivelocks.task.TaskStatus;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * Lincheck in model-checking mode against the in-memory task store ({@link LocalTaskStore}, one queue,
 * two registered tasks, one retry): captures (one task at a time), renewals, completions,
 * failures, releases, status reads and clock ticks by three threads must be explained by a sequential
 * task queue (a task is claimed by one owner at a time, with a token from one store-wide counter; a
 * claim acts only while it is the task's current one and, for a renewal, unexpired; an expired claim
 * makes the task capturable again; captures take the task capturable longest first). The clock is an
 * operation ({@link #tick()}: half a claim time); the store runs no timers.
 *
 * <p>Bounded for the build (30 × 4 scenarios, each with a sequential start of six operations so that claims
 * get to expire); {@code -Dreactivelocks.modelcheck.long=true} explores 100 × 500 (minutes).
 */
@Param(name = "task", gen = IntGen.class, conf = "1:2")
@Param(name = "owner", gen = IntGen.class, conf = "1:2")
@Param(name = "token", gen = IntGen.class, conf = "1:3")
public class LocalTaskStoreLincheckTest {

    static final long CLAIM = 1_000;
    static final int RETRIES = 1;
    static final String QUEUE = "q";

    private final LocalLockStoreLincheckTest.ManualClock clock = new LocalLockStoreLincheckTest.ManualClock();
    private final LocalTaskStore store = new LocalTaskStore(clock);

    /** Both tasks registered (a registration is one map insert; the operations that race are on claims). */
    public LocalTaskStoreLincheckTest() {
        LocalSemaphoreStoreLincheckTest.now(store.register(QUEUE, List.of(new NewTask("t1", null), new NewTask("t2", null)), RETRIES));
    }

    private static ClaimRef claim(int task, int owner, int token) {
        return new ClaimRef("t" + task, "o" + owner, token);
    }

    /** @return {@code id/token/attempt/retriesLeft} of the captured task, or {@code -/<next expiry>} */
    @Operation
    public String capture(@Param(name = "owner") int owner) {
        Capture c = LocalSemaphoreStoreLincheckTest.now(store.capture(QUEUE, "o" + owner, 1, Duration.ofNanos(CLAIM)));
        if (c.tasks().isEmpty()) {
            return "-/" + (c.nextExpiry() == null ? "" : c.nextExpiry().toNanos());
        }
        CapturedTask t = c.tasks().get(0);
        return t.taskId() + "/" + t.token() + "/" + t.attempt() + "/" + t.retriesLeft();
    }

    /** @return whether the claim was current and unexpired, and is renewed */
    @Operation
    public boolean renew(@Param(name = "task") int task, @Param(name = "owner") int owner, @Param(name = "token") int token) {
        return LocalSemaphoreStoreLincheckTest.now(store.renew(QUEUE, List.of(claim(task, owner, token)), Duration.ofNanos(CLAIM))).get(0);
    }

    /** @return whether the claim was current and the task is done */
    @Operation
    public boolean complete(@Param(name = "task") int task, @Param(name = "owner") int owner, @Param(name = "token") int token) {
        return LocalSemaphoreStoreLincheckTest.now(store.complete(QUEUE, claim(task, owner, token)));
    }

    /** @return whether the claim was current and the task failed (capturable again while retries are left) */
    @Operation
    public boolean fail(@Param(name = "task") int task, @Param(name = "owner") int owner, @Param(name = "token") int token) {
        return LocalSemaphoreStoreLincheckTest.now(store.fail(QUEUE, claim(task, owner, token)));
    }

    /** @return 1 when the claim was current and the task is pending again, else 0 */
    @Operation
    public int release(@Param(name = "task") int task, @Param(name = "owner") int owner, @Param(name = "token") int token) {
        return LocalSemaphoreStoreLincheckTest.now(store.release(QUEUE, List.of(claim(task, owner, token))));
    }

    /** @return {@code state/retriesLeft/attempts/token/owner/remaining}, or {@code -} for an unknown task */
    @Operation
    public String status(@Param(name = "task") int task) {
        TaskStatus s = LocalSemaphoreStoreLincheckTest.now(store.status(QUEUE, "t" + task));
        return s == null ? "-" : s.state() + "/" + s.retriesLeft() + "/" + s.attempts() + "/" + s.token() + "/" + s.owner()
                + "/" + (s.claimRemaining() == null ? "" : s.claimRemaining().toNanos());
    }

    /** The store's clock moves half a claim time on. */
    @Operation
    public void tick() {
        clock.advance(CLAIM / 2);
    }

    @Test
    void modelChecking() {
        boolean longMode = Boolean.getBoolean("reactivelocks.modelcheck.long");
        new ModelCheckingOptions()
                .iterations(longMode ? 100 : 30)
                .invocationsPerIteration(longMode ? 500 : 4)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(6)
                .actorsAfter(1)
                .sequentialSpecification(TaskSpec.class)
                .check(LocalTaskStoreLincheckTest.class);
    }

    /** The sequential task queue the store must behave like. */
    public static final class TaskSpec {

        /** One task. */
        private static final class Task {
            TaskState state = TaskState.PENDING;
            int retriesLeft = RETRIES;
            int attempts;
            long token;
            String owner;
            long expiresAt;
            long readyAt; // since when capturable: registration, release, failure, or the claim's expiry
            long order;   // tie-break: the order of registrations, releases and failures
        }

        private long now;
        private long tokens;
        private long sequence;
        private final Map<String, Task> tasks = new LinkedHashMap<>();

        /** Both tasks registered, in order. */
        public TaskSpec() {
            register(1);
            register(2);
        }

        private boolean claimed(Task t) { // in progress and unexpired
            return t.state == TaskState.IN_PROGRESS && t.expiresAt > now;
        }

        private Task current(int task, int owner, int token) {
            Task t = tasks.get("t" + task);
            return t != null && t.state == TaskState.IN_PROGRESS && t.token == token && ("o" + owner).equals(t.owner) ? t : null;
        }

        private void ready(Task t) {
            t.readyAt = now;
            t.order = ++sequence;
        }

        private int register(int task) {
            if (tasks.containsKey("t" + task)) {
                return 0;
            }
            Task t = new Task();
            ready(t);
            tasks.put("t" + task, t);
            return 1;
        }

        /** @see LocalTaskStoreLincheckTest#capture */
        public String capture(int owner) {
            String best = null;
            for (Map.Entry<String, Task> e : tasks.entrySet()) {
                Task t = e.getValue();
                boolean capturable = t.state == TaskState.PENDING || t.state == TaskState.FAILED
                        || t.state == TaskState.IN_PROGRESS && !claimed(t);
                Task b = best == null ? null : tasks.get(best);
                if (capturable && (b == null || t.readyAt < b.readyAt || t.readyAt == b.readyAt && t.order < b.order)) {
                    best = e.getKey();
                }
            }
            if (best == null) {
                long next = Long.MAX_VALUE;
                for (Task t : tasks.values()) {
                    if (claimed(t)) {
                        next = Math.min(next, t.expiresAt - now);
                    }
                }
                return "-/" + (next == Long.MAX_VALUE ? "" : next);
            }
            Task t = tasks.get(best);
            t.state = TaskState.IN_PROGRESS;
            t.owner = "o" + owner;
            t.token = ++tokens;
            t.attempts++;
            t.expiresAt = now + CLAIM;
            t.readyAt = t.expiresAt;
            return best + "/" + t.token + "/" + t.attempts + "/" + t.retriesLeft;
        }

        /** @see LocalTaskStoreLincheckTest#renew */
        public boolean renew(int task, int owner, int token) {
            Task t = current(task, owner, token);
            if (t == null || !claimed(t)) {
                return false;
            }
            t.expiresAt = now + CLAIM;
            t.readyAt = t.expiresAt;
            return true;
        }

        /** @see LocalTaskStoreLincheckTest#complete */
        public boolean complete(int task, int owner, int token) {
            Task t = current(task, owner, token);
            if (t == null) {
                return false;
            }
            t.state = TaskState.DONE;
            return true;
        }

        /** @see LocalTaskStoreLincheckTest#fail */
        public boolean fail(int task, int owner, int token) {
            Task t = current(task, owner, token);
            if (t == null) {
                return false;
            }
            if (t.retriesLeft > 0) {
                t.retriesLeft--;
                t.state = TaskState.FAILED;
                ready(t);
            } else {
                t.state = TaskState.DEAD;
            }
            return true;
        }

        /** @see LocalTaskStoreLincheckTest#release */
        public int release(int task, int owner, int token) {
            Task t = current(task, owner, token);
            if (t == null) {
                return 0;
            }
            t.state = TaskState.PENDING;
            ready(t);
            return 1;
        }

        /** @see LocalTaskStoreLincheckTest#status */
        public String status(int task) {
            Task t = tasks.get("t" + task);
            if (t == null) {
                return "-";
            }
            TaskState state = t.state == TaskState.IN_PROGRESS && !claimed(t) ? TaskState.PENDING : t.state;
            String remaining = claimed(t) ? String.valueOf(t.expiresAt - now) : "";
            return state + "/" + t.retriesLeft + "/" + t.attempts + "/" + t.token + "/" + t.owner + "/" + remaining;
        }

        /** @see LocalTaskStoreLincheckTest#tick */
        public void tick() {
            now += CLAIM / 2;
        }
    }
}
