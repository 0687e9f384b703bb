package io.reactivelocks;

import java.util.Objects;

/**
 * What {@link LockClient#observe} reports about a lock: {@link Free} or {@link Held}.
 */
public sealed interface LockState permits LockState.Free, LockState.Held {

    /** @return the lock's name */
    String name();

    /** @return {@code true} for {@link Held} */
    default boolean isHeld() {
        return this instanceof Held;
    }

    /**
     * Nobody holds the lock.
     *
     * @param name the lock's name
     */
    record Free(String name) implements LockState {
        /** @param name the lock's name */
        public Free {
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * Somebody holds the lock.
     *
     * @param name           the lock's name
     * @param owner          the holder's lease owner id
     * @param token          the holder's fencing token
     * @param validUntilNanos when, on the observing client's monotonic clock, the holder's lease
     *                       expires unless renewed (an estimate from the server's remaining TTL)
     */
    record Held(String name, String owner, long token, long validUntilNanos) implements LockState {
        /** Checks the fields. */
        public Held {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(owner, "owner");
        }
    }
}
