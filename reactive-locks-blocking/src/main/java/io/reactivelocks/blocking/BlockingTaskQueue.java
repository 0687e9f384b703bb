package io.reactivelocks.blocking;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.task.TaskStatus;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A blocking view of a {@link TaskQueue}: register tasks, capture them one at a time on the
 * calling thread, and process each under its claim. Interruption, errors and the refusal on
 * Reactor non-blocking threads are as described on {@link BlockingLocks}.
 *
 * <pre>{@code
 * BlockingTaskQueue tasks = BlockingTaskQueue.of(store.taskQueue(LockOptions.defaults()));
 * tasks.register("emails", "welcome:42", 3, "{\"to\":\"ann@example.com\"}");
 * tasks.capture("emails", claim -> {                        // one claim at a time, on this thread
 *     tasks.process(claim, c -> send(c.payload(), c.token()));
 *     return true;                                          // and wait for the next
 * });
 * }</pre>
 */
public final class BlockingTaskQueue implements AutoCloseable {

    private final TaskQueue queue;

    private BlockingTaskQueue(TaskQueue queue) {
        this.queue = queue;
    }

    /**
     * @param queue the reactive task queue
     * @return a blocking view of it; cheap, holds no resources of its own
     * @throws NullPointerException naming {@code queue} when it is null
     */
    public static BlockingTaskQueue of(TaskQueue queue) {
        return new BlockingTaskQueue(Objects.requireNonNull(queue, "queue"));
    }

    /** @return the reactive task queue underneath */
    public TaskQueue taskQueue() {
        return queue;
    }

    /** @return the timing of this queue client */
    public LockOptions options() {
        return queue.options();
    }

    /**
     * Registers a task as pending, without payload.
     *
     * @param queueName the queue name
     * @param taskId    the task id
     * @param retries   how many failures are retried before the task is dead; at least 0
     * @return {@code true} when the task was new, {@code false} when the queue had it already
     * @throws InterruptedException when interrupted while waiting: the request may have reached the store
     */
    public boolean register(String queueName, String taskId, int retries) throws InterruptedException {
        return register(queueName, taskId, retries, null);
    }

    /**
     * Registers a task as pending (see {@link TaskQueue#register(String, String, int, String)}); a
     * task the queue has already is left as it is.
     *
     * @param queueName the queue name
     * @param taskId    the task id
     * @param retries   how many failures are retried before the task is dead; at least 0
     * @param payload   text handed to the worker with each claim, or {@code null}
     * @return {@code true} when the task was new, {@code false} when the queue had it already
     * @throws InterruptedException  when interrupted while waiting: the request may have reached the store
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean register(String queueName, String taskId, int retries, @Nullable String payload) throws InterruptedException {
        Mono<Boolean> register = queue.register(queueName, taskId, retries, payload);
        Await.refuseNonBlocking("BlockingTaskQueue.register");
        return Boolean.TRUE.equals(Await.interruptibly(register, "register", v -> { }));
    }

    /**
     * Registers many tasks as pending, without payload (see {@link TaskQueue#registerAll}).
     *
     * @param queueName the queue name
     * @param taskIds   the task ids
     * @param retries   how many failures of each are retried; at least 0
     * @return how many tasks were new
     * @throws InterruptedException  when interrupted while waiting
     * @throws LockBackendException  when the store fails (calls before the failing one stay done)
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public int registerAll(String queueName, Collection<String> taskIds, int retries) throws InterruptedException {
        Mono<Integer> register = queue.registerAll(queueName, taskIds, retries);
        Await.refuseNonBlocking("BlockingTaskQueue.registerAll");
        Integer count = Await.interruptibly(register, "registerAll", v -> { });
        return count == null ? 0 : count;
    }

    /**
     * Captures tasks one at a time on the calling thread (see {@link TaskQueue#capture}): waits
     * until a task is capturable, captures exactly one, calls {@code body} with its claim, and only
     * then captures the next — so no claim waits unworked. Returns when the body returns
     * {@code false} or the queue closes. The body should end each claim (e.g. with
     * {@link #process}); a claim it leaves open expires by the claim time.
     *
     * @param queueName the queue name
     * @param body      called with each claim; {@code false} to stop capturing
     * @param <E>       the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged (capturing stops)
     * @throws InterruptedException  when interrupted while waiting for a task: capturing stops, a
     *                               claim captured meanwhile is released
     * @throws LockBackendException  when the store keeps failing
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void capture(String queueName, StreamBody<? super TaskClaim, E> body)
            throws E, InterruptedException {
        var claims = queue.capture(queueName);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingTaskQueue.capture");
        Await.each(claims, "capture", true, body, null,
                claim -> queue.release(claim).subscribe(null, e -> { }));
    }

    /**
     * Captures what is capturable now, up to {@code limit} tasks (see {@link TaskQueue#tryCapture}).
     *
     * @param queueName the queue name
     * @param limit     the most tasks to capture, at least 1
     * @return the claims, possibly none
     * @throws InterruptedException  when interrupted while waiting: the claims of a call in flight are released
     * @throws LockBackendException  when a store call fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<TaskClaim> tryCapture(String queueName, int limit) throws InterruptedException {
        Mono<List<TaskClaim>> claims = queue.tryCapture(queueName, limit).collectList();
        Await.refuseNonBlocking("BlockingTaskQueue.tryCapture");
        List<TaskClaim> list = Await.interruptibly(claims, "tryCapture", l -> l.forEach(c -> queue.release(c).subscribe(null, e -> { })));
        return list == null ? List.of() : list;
    }

    /**
     * Extends a claim by the claim time from now (see {@link TaskQueue#renew}).
     *
     * @param claim the claim
     * @return the claim with its new local deadline, or empty when it expired, was recaptured or ended
     * @throws InterruptedException  when interrupted while waiting
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Optional<TaskClaim> renew(TaskClaim claim) throws InterruptedException {
        Mono<TaskClaim> renew = queue.renew(claim);
        Await.refuseNonBlocking("BlockingTaskQueue.renew");
        return Optional.ofNullable(Await.interruptibly(renew, "renew", c -> { }));
    }

    /**
     * Keeps a claim alive on the calling thread (see {@link TaskQueue#hold}): calls {@code body}
     * with each renewed claim and returns when the claim is lost. When the body returns
     * {@code false} or throws, or the thread is interrupted, the renewals stop (the task is not
     * released: end it with {@link #complete}, {@link #fail} or {@link #release}).
     *
     * @param claim the claim
     * @param body  called with each renewed claim; {@code false} to stop renewing
     * @param <E>   the checked exception the body may throw
     * @throws E                     the body's own exception, unchanged
     * @throws InterruptedException  when interrupted while waiting: the renewals stop
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <E extends Exception> void hold(TaskClaim claim, StreamBody<? super TaskClaim, E> body)
            throws E, InterruptedException {
        var renewals = queue.hold(claim);
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingTaskQueue.hold");
        Await.each(renewals, "hold", false, body, null, null);
    }

    /**
     * Marks the task done, if the claim still holds it.
     *
     * @param claim the claim
     * @return {@code true} when the task is now done, {@code false} when the claim no longer holds it
     * @throws InterruptedException  when interrupted while waiting: the outcome is unknown
     * @throws LockBackendException  when the store fails (the outcome is unknown)
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean complete(TaskClaim claim) throws InterruptedException {
        return ending(queue.complete(claim), "complete");
    }

    /**
     * Records a failure, if the claim still holds the task (one retry used; none left: dead).
     *
     * @param claim the claim
     * @return {@code true} when recorded, {@code false} when the claim no longer holds the task
     * @throws InterruptedException  when interrupted while waiting: the outcome is unknown
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean fail(TaskClaim claim) throws InterruptedException {
        return ending(queue.fail(claim), "fail");
    }

    /**
     * Gives the task back (pending again, no retry used), if the claim still holds it.
     *
     * @param claim the claim
     * @return {@code true} when released, {@code false} when the claim no longer held the task
     * @throws InterruptedException  when interrupted while waiting: the outcome is unknown
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean release(TaskClaim claim) throws InterruptedException {
        return ending(queue.release(claim), "release");
    }

    /**
     * Runs {@code body} on the calling thread under the claim, as {@link TaskQueue#process} does:
     * renews the claim meanwhile; when the body returns the task is completed and its result
     * returned; when it throws the failure is recorded (one retry used) and its exception
     * rethrown. If the claim is lost while the body runs, this thread is interrupted and the call
     * then throws {@link LockLostException} (no retry used).
     *
     * @param claim the claim, as just captured
     * @param body  the work; it gets the claim (for its token and payload)
     * @param <T>   the result type
     * @param <E>   the checked exception the body may throw
     * @return the body's result once the task is done
     * @throws E                     the body's own exception, unchanged (the failure is recorded)
     * @throws InterruptedException  when interrupted before the body started: the task is released
     * @throws LockLostException     when the claim was lost before the task was completed
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public <T, E extends Exception> T process(TaskClaim claim, GrantBody<? super TaskClaim, T, E> body)
            throws E, InterruptedException {
        Objects.requireNonNull(claim, "claim");
        Objects.requireNonNull(body, "body");
        Await.refuseNonBlocking("BlockingTaskQueue.process");
        return CallerScope.<TaskClaim, T, E>run(b -> queue.process(claim, b), body, "process");
    }

    /**
     * Reads one task.
     *
     * @param queueName the queue name
     * @param taskId    the task id
     * @return the task's status, or empty when the queue does not have it
     * @throws InterruptedException  when interrupted while waiting
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Optional<TaskStatus> status(String queueName, String taskId) throws InterruptedException {
        Mono<TaskStatus> status = queue.status(queueName, taskId);
        Await.refuseNonBlocking("BlockingTaskQueue.status");
        return Optional.ofNullable(Await.interruptibly(status, "status", s -> { }));
    }

    /**
     * Forgets a task in any state.
     *
     * @param queueName the queue name
     * @param taskId    the task id
     * @return {@code true} when the queue had the task
     * @throws InterruptedException  when interrupted while waiting: the request may have reached the store
     * @throws LockBackendException  when the store fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean remove(String queueName, String taskId) throws InterruptedException {
        return ending(queue.remove(queueName, taskId), "remove");
    }

    /** Closes the queue underneath (see {@link TaskQueue#close}); idempotent, not interruptible. */
    @Override
    public void close() {
        Await.closing(queue.close(), "BlockingTaskQueue.close");
    }

    private static boolean ending(Mono<Boolean> call, String operation) throws InterruptedException {
        Await.refuseNonBlocking("BlockingTaskQueue." + operation);
        return Boolean.TRUE.equals(Await.interruptibly(call, operation, v -> { }));
    }

    /** @return a description naming the queue */
    @Override
    public String toString() {
        return "BlockingTaskQueue[" + queue + "]";
    }
}
