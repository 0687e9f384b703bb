package io.reactivelocks.spi.task;

import java.util.Objects;

/**
 * What identifies one claim on the store: the task, the owner that captured it and the token of
 * that capture. Every store operation on a claim checks both owner and token.
 *
 * @param taskId the task id
 * @param owner  the owner id of the capture call
 * @param token  the fencing token of the capture
 */
public record ClaimRef(String taskId, String owner, long token) {
    /** Checks the fields. */
    public ClaimRef {
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(owner, "owner");
    }
}
