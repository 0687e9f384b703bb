package io.reactivelocks.task;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.task.DefaultTaskQueue;
import io.reactivelocks.spi.task.TaskStore;
import java.util.Collection;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Task capture: tasks registered under a queue name, each with a number of retries and an
 * optional payload, captured by any number of workers across the fleet. A capture moves tasks
 * atomically to {@link TaskState#IN_PROGRESS} and hands each out as a {@link TaskClaim}: a lease
 * on the task with its own fencing token and an expiry decided by the store's clock. The worker
 * then {@linkplain #complete completes}, {@linkplain #fail fails} (one retry less; none left:
 * {@link TaskState#DEAD}) or {@linkplain #release releases} it (capturable again, no retry used),
 * renewing the claim meanwhile ({@link #renew}, {@link #hold}) — or lets {@link #process} do all
 * of that around its work. The same API runs on every store that has task queues
 * (the {@code taskQueue} of a Redis or PostgreSQL {@link io.reactivelocks.LockStore}, {@link io.reactivelocks.local.LocalTaskStore}).
 *
 * <pre>{@code
 * TaskQueue tasks = store.taskQueue(options);   // store = RedisLocks.connect(redis), PostgresLocks.connect(db); or TaskQueue.create(new LocalTaskStore())
 * tasks.register("emails", "welcome:42", 3, "{\"to\":\"ann@example.com\"}").subscribe();
 * tasks.capture("emails")                                     // demand-driven: at most 8 claims at a time here
 *      .flatMap(claim -> tasks.process(claim, c -> send(c.payload(), c.token())), 8)
 *      .subscribe();
 * }</pre>
 *
 * <p><b>No sweeper.</b> A claim whose expiry passed (its worker crashed, paused or lost the
 * network) is simply capturable again: captures take expired claims like pending tasks. The new
 * claim carries a greater token, and the old claim can no longer complete, fail, release or renew
 * the task. Until someone recaptures it, an expired claim may still complete, fail or release it
 * (nobody else can have worked on it); it can no longer be renewed. An expiry uses no retry;
 * {@link TaskClaim#attempt()} counts captures.
 *
 * <p><b>Retries.</b> {@code retries} is the number of failures that are retried: a task
 * registered with 2 retries is dead at its third failure. A registration never resets a task the
 * queue knows (in any state): {@link #remove} it first.
 *
 * <p><b>Timing</b> comes from {@link LockOptions}: the lease time is the claim time, the renewal
 * interval paces {@link #hold} and {@link #process}, the backoff paces an idle capturer's re-checks
 * and the retries of transient failures, the request timeout bounds every store call, the drift
 * allowance shortens {@link TaskClaim#validUntilNanos()}, the clock measures it and the scheduler
 * (Reactor's parallel scheduler when {@code null}) runs the timers. The store's clock alone decides
 * expiry.
 *
 * <p>Queue names and task ids follow the lock-name rules (non-empty, at most 1024 UTF-8 bytes, any
 * characters, treated as data); payloads are at most {@value #MAX_PAYLOAD_BYTES} UTF-8 bytes. Every
 * method is lazy and non-blocking and checks its arguments at call time
 * ({@link NullPointerException}/{@link IllegalArgumentException} naming the argument). Failures are
 * {@link LockBackendException}s whose {@code lockName()} is the queue; after {@link #close()},
 * {@link LockClientClosedException}.
 */
public interface TaskQueue {

    /** The largest payload, in UTF-8 bytes (a lone surrogate counts 3): 64 KiB. */
    int MAX_PAYLOAD_BYTES = 64 * 1024;

    /** The most tasks one capture call to the store takes, however large the demand. */
    int MAX_CAPTURE_PER_CALL = 500;

    /**
     * @param store the store; the queue closes it on {@link #close()}
     * @return a task queue with {@link LockOptions#defaults()} (claims of 30 s)
     * @throws NullPointerException when store is null
     */
    static TaskQueue create(TaskStore store) {
        return create(store, LockOptions.defaults());
    }

    /**
     * @param store   the store; the queue closes it on {@link #close()}
     * @param options claim time (the lease time), renewal interval, backoff, request timeout,
     *                drift, clock and scheduler (see the class documentation)
     * @return a task queue
     * @throws NullPointerException when an argument is null
     */
    static TaskQueue create(TaskStore store, LockOptions options) {
        return new DefaultTaskQueue(store, options);
    }

    /** @return the timing of this queue client */
    LockOptions options();

    /**
     * Registers a task as pending, without payload; see {@link #register(String, String, int, String)}.
     *
     * @param queue   the queue name
     * @param taskId  the task id
     * @param retries how many failures are retried before the task is dead; at least 0
     * @return {@code true} when the task was new, {@code false} when the queue had it already
     * @throws NullPointerException     when queue or taskId is null
     * @throws IllegalArgumentException when a name is empty or too long, or retries is negative
     */
    Mono<Boolean> register(String queue, String taskId, int retries);

    /**
     * Registers a task as pending, in one store call per subscription, and wakes the queue's
     * waiting capturers. Idempotent: a task id the queue already has — in any state, done and dead
     * included — is left exactly as it is (retries, payload and state are not reset).
     *
     * @param queue   the queue name: non-empty, at most 1024 UTF-8 bytes, any characters
     * @param taskId  the task id: non-empty, at most 1024 UTF-8 bytes, any characters
     * @param retries how many failures are retried before the task is dead; at least 0
     * @param payload text handed to the worker with each claim, at most {@value #MAX_PAYLOAD_BYTES}
     *                UTF-8 bytes, or {@code null}
     * @return {@code true} when the task was new, {@code false} when the queue had it already;
     *         errors with {@link LockBackendException}
     * @throws NullPointerException     when queue or taskId is null
     * @throws IllegalArgumentException when a name is empty or too long, retries is negative or the payload too large
     */
    Mono<Boolean> register(String queue, String taskId, int retries, @Nullable String payload);

    /**
     * Registers many tasks as pending, without payload, in their iteration order, in as few store
     * calls as the store allows, and wakes the queue's waiting capturers. Ids the queue already has
     * are left as they are.
     *
     * @param queue   the queue name
     * @param taskIds the task ids (copied and checked at call time)
     * @param retries how many failures of each are retried before it is dead; at least 0
     * @return how many tasks were new; errors with {@link LockBackendException} (calls before the
     *         failing one stay done)
     * @throws NullPointerException     when an argument or an id is null
     * @throws IllegalArgumentException when a name or id is empty or too long, or retries is negative
     */
    Mono<Integer> registerAll(String queue, Collection<String> taskIds, int retries);

    /**
     * Captures tasks of {@code queue} as they become capturable, driven by demand: each
     * {@code request(n)} lets the next store call capture at most {@code n} tasks (at most
     * {@value #MAX_CAPTURE_PER_CALL} per call), so the stream never captures more than was
     * requested. One call is in flight at a time; its claims are emitted once it answered.
     * Subscribing sends nothing until the first request.
     *
     * <p>When the queue has nothing capturable the stream waits — it never completes because the
     * queue is empty — for the first of: a wake-up from the store (a task was registered, failed
     * with a retry left or released; also each (re)subscription of the store's notifications), the
     * expiry of the earliest live claim the store reported, and the next jittered backoff step.
     * Then it tries again.
     *
     * <p>Cancelling stops capturing: claims already delivered stay the subscriber's; claims
     * captured by a call in flight (or not yet delivered) are released as soon as it answers.
     * Transient failures are retried with the backoff, at most {@code backoff.maxAttempts} times in
     * a row (10 when unbounded); then, or on a permanent failure, the stream errors with a
     * {@link LockBackendException}. It completes when the queue or its store closes. Signals arrive
     * on the store's threads or the queue's scheduler: move slow work elsewhere.
     *
     * @param queue the queue name
     * @return the claims
     * @throws NullPointerException     when queue is null
     * @throws IllegalArgumentException when the name is empty or too long
     */
    Flux<TaskClaim> capture(String queue);

    /**
     * Captures what is capturable now, up to {@code limit} tasks, never more than requested: one
     * store call per request round; completes when the limit is reached or a call found fewer
     * tasks than it asked for. Errors at once, with a {@link LockBackendException}, when a call
     * fails. Cancelling releases the claims of a call still in flight.
     *
     * @param queue the queue name
     * @param limit the most tasks to capture, at least 1
     * @return the claims
     * @throws NullPointerException     when queue is null
     * @throws IllegalArgumentException when the name is empty or too long, or limit is below 1
     */
    Flux<TaskClaim> tryCapture(String queue, int limit);

    /**
     * Extends a claim that has not expired yet by the claim time from now (owner and token
     * checked). One store call per subscription.
     *
     * @param claim the claim
     * @return the claim with its new local deadline; empty when it expired, was recaptured or
     *         ended; errors with {@link LockBackendException}
     * @throws NullPointerException when claim is null
     */
    Mono<TaskClaim> renew(TaskClaim claim);

    /**
     * Keeps a claim alive like a lock's hold stream: renews it every renewal interval (claims of a
     * queue due within a quarter interval of each other share one store call, renewed a little
     * early) and emits the renewed claim; completes when the claim is lost — the store said it is not held any more,
     * or its local deadline passed without a confirmed renewal (transient failures are retried with
     * the backoff until then) — or when the queue closes. Cancelling stops the renewals; it does not release.
     *
     * @param claim the claim
     * @return the renewed claims
     * @throws NullPointerException when claim is null
     */
    Flux<TaskClaim> hold(TaskClaim claim);

    /**
     * Marks the task done, if the claim still holds it (owner and token checked). One store call
     * per subscription.
     *
     * @param claim the claim
     * @return {@code true} when the task is now done, {@code false} when the claim no longer holds
     *         it; errors with {@link LockBackendException} (the outcome is then unknown)
     * @throws NullPointerException when claim is null
     */
    Mono<Boolean> complete(TaskClaim claim);

    /**
     * Records a failure, if the claim still holds the task (checked like {@link #complete}): with a
     * retry left the task becomes {@link TaskState#FAILED} — capturable again, waiting capturers
     * woken — with one retry less; with none it becomes {@link TaskState#DEAD}, kept visible and
     * never captured again. One store call per subscription.
     *
     * @param claim the claim
     * @return {@code true} when the failure was recorded, {@code false} when the claim no longer
     *         holds the task; errors with {@link LockBackendException}
     * @throws NullPointerException when claim is null
     */
    Mono<Boolean> fail(TaskClaim claim);

    /**
     * Gives the task back, if the claim still holds it (checked like {@link #complete}): it is
     * {@link TaskState#PENDING} again at once, no retry used, and waiting capturers are woken.
     *
     * @param claim the claim
     * @return {@code true} when released, {@code false} when the claim no longer held the task;
     *         errors with {@link LockBackendException}
     * @throws NullPointerException when claim is null
     */
    Mono<Boolean> release(TaskClaim claim);

    /**
     * Runs {@code body} under the claim: renews the claim while the body runs ({@link #hold}).
     * When the body succeeds (with a value or empty) the task is completed; when it errors the
     * failure is recorded ({@link #fail}, one retry used) and the body's error passed on; when the
     * subscriber cancels, the body is cancelled and the task released. If the claim is lost while
     * the body runs, the body is cancelled, the task released (best effort; usually it is no longer
     * this claim's) and the result is a {@link LockLostException} (lock name: the queue; token: the
     * claim's) — the work must be treated as not done under the claim, and no retry is used.
     * Completing after the body succeeded can also find the claim lost: the same error then.
     *
     * @param claim the claim, as just captured
     * @param body  the work; it gets the claim (for its token and payload)
     * @param <T>   the body's result type
     * @return the body's result once the task is done
     * @throws NullPointerException when an argument is null
     */
    <T> Mono<T> process(TaskClaim claim, Function<? super TaskClaim, ? extends Mono<T>> body);

    /**
     * Reads one task, in one store call per subscription.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return the task's status; empty when the queue does not have it; errors with {@link LockBackendException}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is empty or too long
     */
    Mono<TaskStatus> status(String queue, String taskId);

    /**
     * Forgets a task in any state (done and dead tasks stay until removed), in one store call per
     * subscription. A claim on it can then no longer renew, complete, fail or release it.
     *
     * @param queue  the queue name
     * @param taskId the task id
     * @return {@code true} when the queue had the task; errors with {@link LockBackendException}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is empty or too long
     */
    Mono<Boolean> remove(String queue, String taskId);

    /**
     * Closes the queue: running captures complete, later calls error with
     * {@link LockClientClosedException}, and the store is closed (connections it owns; a
     * connection or backend the application passed in stays open). Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
