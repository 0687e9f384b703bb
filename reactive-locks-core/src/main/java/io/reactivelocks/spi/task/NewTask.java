package io.reactivelocks.spi.task;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A task to register, as {@link TaskStore#register} receives it (checked by the engine).
 *
 * @param taskId  the task id
 * @param payload the payload, or {@code null}
 */
public record NewTask(String taskId, @Nullable String payload) {
    /** Checks the fields. */
    public NewTask {
        Objects.requireNonNull(taskId, "taskId");
    }
}
