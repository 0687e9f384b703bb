package io.reactivelocks.task;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One task of a {@link TaskQueue} as the store sees it at the time of the read.
 *
 * @param queue          the queue name
 * @param taskId         the task id
 * @param state          where the task is; an expired claim shows as {@link TaskState#PENDING}
 * @param retriesLeft    how many failures will still be retried
 * @param attempts       how many times the task was captured
 * @param token          the fencing token of its last capture, 0 when it was never captured
 * @param owner          the owner id of its last capture, {@code null} when it was never captured
 * @param claimRemaining while {@link TaskState#IN_PROGRESS}: the time left on the claim by the
 *                       store's clock; else {@code null}
 * @param payload        the payload the task was registered with, or {@code null}
 */
public record TaskStatus(String queue, String taskId, TaskState state, int retriesLeft, int attempts, long token,
                         @Nullable String owner, @Nullable Duration claimRemaining, @Nullable String payload) {

    /** Checks the fields. */
    public TaskStatus {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(state, "state");
    }
}
