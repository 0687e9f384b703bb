package io.reactivelocks.redis;

import io.reactivelocks.LockClock;
import java.util.Objects;

/**
 * A captured task of a {@link RedisTaskQueue}: a lease on the task, held until it is completed,
 * failed or released, or until its claim expires (then another capturer may take the task, with
 * a higher token). Immutable; {@link RedisTaskQueue#renew} answers an updated copy.
 *
 * @param queue           the queue name
 * @param taskId          the task id
 * @param owner           the random id of the capture that took it (never a thread id)
 * @param token           the fencing token: strictly greater than every token handed out before on
 *                        this queue, so a resource can reject the work of an earlier, expired claim
 * @param retriesLeft     how many failures of this task will still be retried
 * @param attempt         how many times the task was captured, this capture included (a count
 *                        above 1 means an earlier claim failed, was released or expired)
 * @param validUntilNanos the local monotonic deadline ({@link LockClock}): the time the capture or
 *                        last renewal was sent + the claim time − the drift allowance
 */
public record TaskClaim(String queue, String taskId, String owner, long token, int retriesLeft, long attempt,
                        long validUntilNanos) {

    /** Checks the fields. */
    public TaskClaim {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(owner, "owner");
    }

    /**
     * @param clock the clock the claim was timed with ({@link io.reactivelocks.LockOptions#clock()})
     * @return whether the claim's local deadline has not passed yet
     */
    public boolean isValid(LockClock clock) {
        return clock.nanoTime() - validUntilNanos < 0;
    }

    TaskClaim withValidUntil(long nanos) {
        return new TaskClaim(queue, taskId, owner, token, retriesLeft, attempt, nanos);
    }
}
