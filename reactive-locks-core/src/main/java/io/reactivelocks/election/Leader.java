package io.reactivelocks.election;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Who leads an election, as {@link LeaderElection#leader} and {@link LeaderElection#observe} see
 * it (any process, leading or not).
 *
 * @param name  the election name (the name of the lock behind it)
 * @param value the value the leader campaigned with or last proclaimed (its address, its id, ...);
 *              {@code null} only when the lock was taken outside an election, without payload
 * @param owner the owner id of the leader's lease
 * @param token the leader's fencing token: every later leader has a larger one
 */
public record Leader(String name, @Nullable String value, String owner, long token) {
    /** Checks the fields. */
    public Leader {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
    }
}
