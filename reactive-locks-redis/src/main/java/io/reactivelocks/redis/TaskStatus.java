package io.reactivelocks.redis;

import java.time.Duration;
import java.util.Objects;

/**
 * One task of a {@link RedisTaskQueue} as the server sees it now.
 *
 * @param queue          the queue name
 * @param taskId         the task id
 * @param state          where the task is
 * @param retriesLeft    how many failures will still be retried
 * @param failures       how many times a claim on it failed
 * @param captures       how many times it was captured
 * @param token          the fencing token of its last claim, 0 when never captured
 * @param claimRemaining while {@link TaskState#IN_PROGRESS}: the time left on the claim by the
 *                       server's clock; else {@code null}
 */
public record TaskStatus(String queue, String taskId, TaskState state, int retriesLeft, int failures, long captures,
                         long token, Duration claimRemaining) {

    /** Checks the fields. */
    public TaskStatus {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(state, "state");
    }
}
