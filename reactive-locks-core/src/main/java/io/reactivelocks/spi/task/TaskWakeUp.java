package io.reactivelocks.spi.task;

import java.util.Objects;

/**
 * A signal of {@link TaskStore#wakeUps}: tasks of the queue may have become capturable.
 *
 * @param queue      the queue name
 * @param subscribed {@code true} when the store-side subscription became live (first, and after a
 *                   reconnection): anything may have happened before, capturers re-check
 */
public record TaskWakeUp(String queue, boolean subscribed) {
    /** Checks the fields. */
    public TaskWakeUp {
        Objects.requireNonNull(queue, "queue");
    }
}
