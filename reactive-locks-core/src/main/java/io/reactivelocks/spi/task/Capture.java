package io.reactivelocks.spi.task;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The answer of one {@link TaskStore#capture} call.
 *
 * @param tasks      the captured tasks, at most the limit asked for, in capture order
 * @param claimTime  the claim time the store granted, counted by the store from when it received the call
 * @param nextExpiry when fewer tasks than asked for were captured: the time until the earliest live
 *                   claim of the queue expires by the store's clock (a hint for an idle capturer);
 *                   {@code null} when there is none or the store does not say
 */
public record Capture(List<CapturedTask> tasks, Duration claimTime, @Nullable Duration nextExpiry) {
    /** Checks and copies the fields. */
    public Capture {
        tasks = List.copyOf(tasks);
        Objects.requireNonNull(claimTime, "claimTime");
    }
}
