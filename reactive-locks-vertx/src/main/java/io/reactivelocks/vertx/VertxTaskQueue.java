package io.reactivelocks.vertx;

import io.reactivelocks.LockOptions;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.task.TaskStatus;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Collection;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The {@link TaskQueue} API for Vert.x: registrations and claim outcomes as futures, captures and
 * claim renewals as {@link LockStream}s, all delivered on the caller's context (the current one when
 * the method is called, or the one bound with {@link #on(Context)}).
 *
 * <pre>{@code
 * VertxTaskQueue emails = VertxTaskQueue.create(vertx, store.taskQueue(LockOptions.defaults()));
 * emails.register("emails", "welcome:42", 3, "{\"to\":\"ann@example.com\"}");
 * LockStream<TaskClaim> claims = emails.capture("emails").pause();
 * claims.handler(claim -> emails.process(claim, c -> send(c.payload(), c.token()))
 *         .onComplete(done -> claims.fetch(1)));                   // one task at a time
 * claims.fetch(1);
 * }</pre>
 *
 * <p>A capture stream captures as much as its demand: in flowing mode (the default) it captures
 * whatever is capturable; {@link LockStream#pause()} and {@link LockStream#fetch(long)} bound it.
 * Claims captured but not delivered when the stream is cancelled are released (capturable again,
 * no retry used). Arguments are checked at call time as on {@link TaskQueue}.
 */
public final class VertxTaskQueue {

    private final TaskQueue queue;
    private final CallerContext context;

    VertxTaskQueue(TaskQueue queue, CallerContext context) {
        this.queue = queue;
        this.context = context;
    }

    /**
     * @param vertx the Vert.x instance whose contexts receive the results
     * @param queue the task queue to use (closed only by {@link #close()})
     * @return the Vert.x view of {@code queue}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxTaskQueue create(Vertx vertx, TaskQueue queue) {
        Objects.requireNonNull(queue, "queue");
        return new VertxTaskQueue(queue, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view; it must belong
     *                to this object's Vert.x
     * @return a view of the same queue bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxTaskQueue on(Context context) {
        return new VertxTaskQueue(queue, this.context.on(context));
    }

    /** @return the task queue behind this view (for its Reactor API) */
    public TaskQueue taskQueue() {
        return queue;
    }

    /** @return the queue's timing (claim time, renewal, backoff), as {@link TaskQueue#options()} */
    public LockOptions options() {
        return queue.options();
    }

    /**
     * Registers a task without payload, as {@link TaskQueue#register(String, String, int)}.
     *
     * @param queue   the queue name
     * @param taskId  the task id
     * @param retries how many failures are retried before the task is dead; at least 0
     * @return a future of {@code true} when the task was new, {@code false} when the queue had it
     */
    public Future<Boolean> register(String queue, String taskId, int retries) {
        return context.future(this.queue.register(queue, taskId, retries));
    }

    /**
     * Registers a task as pending, as {@link TaskQueue#register(String, String, int, String)}; a task
     * the queue has already is left as it is.
     *
     * @param queue   the queue name
     * @param taskId  the task id
     * @param retries how many failures are retried before the task is dead; at least 0
     * @param payload text handed to the worker with each claim, or {@code null}
     * @return a future of {@code true} when the task was new, {@code false} when the queue had it
     */
    public Future<Boolean> register(String queue, String taskId, int retries, @Nullable String payload) {
        return context.future(this.queue.register(queue, taskId, retries, payload));
    }

    /**
     * Registers many tasks without payload, as {@link TaskQueue#registerAll(String, Collection, int)}.
     *
     * @param queue   the queue name
     * @param taskIds the task ids
     * @param retries how many failures of each are retried; at least 0
     * @return a future of how many tasks were new
     */
    public Future<Integer> registerAll(String queue, Collection<String> taskIds, int retries) {
        return context.future(this.queue.registerAll(queue, taskIds, retries));
    }

    /**
     * Captures tasks as they become capturable, as {@link TaskQueue#capture(String)}: setting a
     * handler starts capturing, as much as the stream's demand; the stream waits (without a thread)
     * while the queue is empty and ends when the queue closes. {@link LockStream#cancel()} stops
     * capturing; claims captured and not yet delivered are released.
     *
     * @param queue the queue name
     * @return the claim stream on the caller's context
     */
    public LockStream<TaskClaim> capture(String queue) {
        return ContextBridge.toStream(this.queue.capture(queue), context.get(), null, this::giveBack);
    }

    /**
     * Captures what is capturable now, up to {@code limit} tasks, as
     * {@link TaskQueue#tryCapture(String, int)}; the stream ends after the last claim.
     *
     * @param queue the queue name
     * @param limit the most tasks to capture, at least 1
     * @return the claim stream on the caller's context
     */
    public LockStream<TaskClaim> tryCapture(String queue, int limit) {
        return ContextBridge.toStream(this.queue.tryCapture(queue, limit), context.get(), null, this::giveBack);
    }

    /** Releases a claim captured for a stream that was cancelled before delivering it. */
    private void giveBack(TaskClaim claim) {
        queue.release(claim).onErrorResume(e -> Mono.empty()).subscribe();
    }

    /**
     * Extends a live claim by the claim time, as {@link TaskQueue#renew(TaskClaim)}.
     *
     * @param claim the claim
     * @return a future of the renewed claim, or of {@code null} when it expired, was recaptured or ended
     */
    public Future<@Nullable TaskClaim> renew(TaskClaim claim) {
        return context.future(queue.renew(claim));
    }

    /**
     * Keeps a claim alive as a stream, as {@link TaskQueue#hold(TaskClaim)}: the handler receives the
     * claim after each renewal; the stream ends when the claim is lost. Cancelling stops the
     * renewals; it does not release (see {@link #release(TaskClaim)}).
     *
     * @param claim the claim
     * @return the renewal stream on the caller's context
     */
    public LockStream<TaskClaim> hold(TaskClaim claim) {
        return context.stream(queue.hold(claim));
    }

    /**
     * Marks the task done if the claim still holds it, as {@link TaskQueue#complete(TaskClaim)}.
     *
     * @param claim the claim
     * @return a future of {@code true} when done, {@code false} when the claim no longer holds the task
     */
    public Future<Boolean> complete(TaskClaim claim) {
        return context.future(queue.complete(claim));
    }

    /**
     * Records a failure if the claim still holds the task, as {@link TaskQueue#fail(TaskClaim)}: one
     * retry less, or dead with none left.
     *
     * @param claim the claim
     * @return a future of {@code true} when recorded, {@code false} when the claim no longer holds the task
     */
    public Future<Boolean> fail(TaskClaim claim) {
        return context.future(queue.fail(claim));
    }

    /**
     * Gives the task back (pending again, no retry used) if the claim still holds it, as
     * {@link TaskQueue#release(TaskClaim)}.
     *
     * @param claim the claim
     * @return a future of {@code true} when released, {@code false} when the claim no longer held the task
     */
    public Future<Boolean> release(TaskClaim claim) {
        return context.future(queue.release(claim));
    }

    /**
     * Runs {@code body} under the claim, as {@link TaskQueue#process(TaskClaim, Function)}: the claim
     * is renewed while the body's future is pending; the task is completed when it succeeds, failed
     * (one retry used) when it fails. A loss of the claim fails the result with
     * {@link io.reactivelocks.LockLostException}. The body is called on the caller's context.
     *
     * @param claim the claim, as just captured
     * @param body  the work: returns a Vert.x future
     * @param <T>   the body's result type
     * @return a future of the body's result once the task is done, on the caller's context
     * @throws NullPointerException naming {@code body} when it is null
     */
    public <T> Future<@Nullable T> process(TaskClaim claim, Function<? super TaskClaim, ? extends Future<T>> body) {
        Objects.requireNonNull(body, "body");
        Context ctx = context.get();
        return ContextBridge.toFuture(queue.process(claim, c -> ContextBridge.toMono(() -> body.apply(c), ctx)), ctx);
    }

    /**
     * Reads one task, as {@link TaskQueue#status(String, String)}.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return a future of the task's status, or of {@code null} when the queue does not have it
     */
    public Future<@Nullable TaskStatus> status(String queue, String taskId) {
        return context.future(this.queue.status(queue, taskId));
    }

    /**
     * Forgets a task in any state, as {@link TaskQueue#remove(String, String)}.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return a future of {@code true} when the queue had the task
     */
    public Future<Boolean> remove(String queue, String taskId) {
        return context.future(this.queue.remove(queue, taskId));
    }

    /**
     * Closes the queue, as {@link TaskQueue#close()}: running captures end, later calls fail.
     *
     * @return a future completed on the caller's context when closed
     */
    public Future<Void> close() {
        return context.future(queue.close());
    }
}
