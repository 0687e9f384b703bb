package io.reactivelocks.spi.task;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One task a capture call moved to in-progress.
 *
 * @param taskId      the task id
 * @param token       the fencing token of this capture: greater than every earlier capture's of the task
 * @param attempt     how many times the task was captured, this capture included
 * @param retriesLeft how many failures will still be retried
 * @param payload     the payload the task was registered with, or {@code null}
 */
public record CapturedTask(String taskId, long token, int attempt, int retriesLeft, @Nullable String payload) {
    /** Checks the fields. */
    public CapturedTask {
        Objects.requireNonNull(taskId, "taskId");
    }
}
