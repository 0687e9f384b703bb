package io.reactivelocks.r2dbc;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockLostException;
import java.time.Duration;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A captured task of a {@link PostgresTaskQueue}: a lease on the task with a fencing token and an
 * expiry decided by the server's clock. It ends when completed, failed or released, or when its
 * expiry passes — from then on any capturer may take the task again, with a greater token, and
 * this claim can no longer complete, fail, release or renew it.
 *
 * <p><b>No automatic renewal.</b> A claim lives for the claim time of its capture unless it is
 * renewed: call {@link #renew()} yourself, subscribe to {@link #hold()} for the duration of the
 * work, or let {@link #process} do everything (renew while the work runs, then complete, fail or
 * release).
 *
 * <p>A claim is one object per capture (never tied to a thread); its deadline moves forward with
 * each confirmed renewal. Every method returning a publisher is lazy: nothing is sent before
 * subscription, and each subscription sends one statement. Cancelling returns the connection but
 * cannot recall a statement already sent. Failures are {@link LockBackendException}s whose
 * {@code lockName()} is the queue.
 */
public interface TaskClaim {

    /** @return the queue name */
    String queue();

    /** @return the task id */
    String taskId();

    /** @return the random owner id of the capture that took the task (never a thread id) */
    String owner();

    /**
     * @return the fencing token: greater than the token of every earlier capture of this task (and
     *         of every lock grant before it: the lock sequence is shared). Pass it to the resource the
     *         task writes, which should reject lower tokens ({@link FencedWrites}).
     */
    long token();

    /** @return how many failures of the task will still be retried, as of the capture */
    int retriesLeft();

    /** @return how many times the task was captured, this capture included (above 1: an earlier claim failed, was released or expired) */
    int attempt();

    /** @return the payload the task was registered with, or {@code null} */
    String payload();

    /** @return the claim time asked of the server at capture and at each renewal */
    Duration claimTime();

    /**
     * @return the local monotonic deadline ({@link io.reactivelocks.LockOptions#clock()}, nanoseconds)
     *         until which the claim is known to be held: send time of the capture or of the last
     *         confirmed renewal + claim time − drift allowance
     */
    long validUntilNanos();

    /** @return the time left until {@link #validUntilNanos()}; zero when it has passed */
    Duration remaining();

    /** @return {@code true} until the deadline passes or the claim ended (completed, failed, released, or found lost) */
    boolean isValid();

    /**
     * Extends the claim by its claim time from now, if it is still this claim's (owner and token
     * checked) and has not expired by the server's clock; moves {@link #validUntilNanos()} forward.
     *
     * @return {@code true} when renewed, {@code false} when the claim expired, was recaptured or
     *         ended; errors with {@link LockBackendException}
     */
    Mono<Boolean> renew();

    /**
     * Marks the task done, if this claim still holds it: owner and token are checked, so a claim
     * whose task was recaptured gets {@code false}. An expired claim nobody recaptured yet may still
     * complete (no one else can have worked on the task).
     *
     * @return {@code true} when the task is now done, {@code false} when the claim no longer holds it;
     *         errors with {@link LockBackendException} (the outcome is then unknown)
     */
    Mono<Boolean> complete();

    /**
     * Records a failure, if this claim still holds the task (checked like {@link #complete()}):
     * with a retry left the task becomes {@link TaskState#FAILED} — capturable again — with one
     * retry less; with none it becomes {@link TaskState#DEAD}, kept visible and never captured again.
     *
     * @return {@code true} when the failure was recorded, {@code false} when the claim no longer holds
     *         the task; errors with {@link LockBackendException}
     */
    Mono<Boolean> fail();

    /**
     * Gives the task back, if this claim still holds it (checked like {@link #complete()}): it is
     * {@link TaskState#PENDING} again at once, no retry used, and waiting capturers are woken.
     *
     * @return {@code true} when released, {@code false} when the claim no longer held the task;
     *         errors with {@link LockBackendException}
     */
    Mono<Boolean> release();

    /**
     * Keeps the claim alive like a lock's hold stream: renews it every renewal interval (the
     * queue's renewal interval scaled to this claim time: a third of it by default) and emits this
     * claim after each confirmed renewal. Transient failures are retried with the backoff while
     * the deadline allows. Completes when the claim is lost: the server said it is not ours any more,
     * or the deadline passed without a confirmed renewal. Cancelling stops renewing; it does not
     * release. The renewals run on the queue's scheduler.
     *
     * @return the claim after each renewal
     */
    Flux<TaskClaim> hold();

    /**
     * Runs {@code body} under the claim: renews the claim while the body runs ({@link #hold()});
     * when the body succeeds (with a value or empty) the task is completed; when it errors the
     * failure is recorded ({@link #fail()}) and the body's error passed on; when the subscriber
     * cancels the task is released. If the claim is lost while the body runs, the body is cancelled
     * and the result is a {@link LockLostException} (lock name: the queue; token: this claim's):
     * the work must be treated as not done under the claim. Completing after the body succeeded can
     * also find the claim lost: the same error then.
     *
     * @param body the work; it gets this claim (for {@link #token()} and {@link #payload()})
     * @param <T>  the body's result type
     * @return the body's result once the task is done
     * @throws NullPointerException when body is null
     */
    <T> Mono<T> process(Function<? super TaskClaim, ? extends Mono<T>> body);
}
