package io.reactivelocks.task;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A captured task: a lease on the task, held until it is completed, failed or released through
 * its {@link TaskQueue}, or until its claim expires by the store's clock — from then on any
 * capturer may take the task again, with a greater token, and this claim can no longer complete,
 * fail, release or renew it. Immutable; {@link TaskQueue#renew} and {@link TaskQueue#hold}
 * answer copies with a later {@link #validUntilNanos()}.
 *
 * @param queue           the queue name
 * @param taskId          the task id
 * @param owner           the random id of the capture that took it (never a thread id)
 * @param token           the fencing token: strictly greater than the token of every earlier
 *                        capture of this task on this store, so a resource can reject the work of
 *                        an earlier, expired claim
 * @param attempt         how many times the task was captured, this capture included (above 1: an
 *                        earlier claim failed, was released or expired)
 * @param retriesLeft     how many failures of this task will still be retried, as of the capture
 * @param payload         the payload the task was registered with, or {@code null}
 * @param claimTime       the claim time asked of the store at capture and at each renewal
 * @param validUntilNanos the local monotonic deadline ({@link LockClock}): the time the capture or
 *                        the last confirmed renewal was sent + the claim time − the drift allowance
 */
public record TaskClaim(String queue, String taskId, String owner, long token, int attempt, int retriesLeft,
                        @Nullable String payload, Duration claimTime, long validUntilNanos) {

    /** Checks the fields. */
    public TaskClaim {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(claimTime, "claimTime");
    }

    /**
     * @param clock the clock the claim was timed with ({@link io.reactivelocks.LockOptions#clock()})
     * @return whether the claim's local deadline has not passed yet
     */
    public boolean isValid(LockClock clock) {
        return clock.nanoTime() - validUntilNanos < 0;
    }

    /**
     * @param clock the clock the claim was timed with
     * @return the time left until {@link #validUntilNanos()}; zero when it has passed
     */
    public Duration remaining(LockClock clock) {
        return Duration.ofNanos(Math.max(0, validUntilNanos - clock.nanoTime()));
    }

    /**
     * @param nanos a new local deadline
     * @return a copy of this claim with that deadline
     */
    public TaskClaim withValidUntil(long nanos) {
        return new TaskClaim(queue, taskId, owner, token, attempt, retriesLeft, payload, claimTime, nanos);
    }
}
