package io.reactivelocks.spi.task;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A claim held now on a task, as {@link TaskStore#claims} reads it.
 *
 * @param taskId    the task
 * @param owner     the claim's owner id
 * @param token     the claim's fencing token
 * @param remaining what is left of the claim by the store's clock, or {@code null} when the store keeps no expiry
 */
public record HeldClaim(String taskId, String owner, long token, @Nullable Duration remaining) {
    /** Checks the fields. */
    public HeldClaim {
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(owner, "owner");
    }
}
