package io.reactivelocks;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

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
     * @param payload        the value the holder stored with its grant
     *                       ({@link LockOptions#payload()}, {@link Lease#updatePayload(String)}),
     *                       or {@code null} for none
     */
    record Held(String name, String owner, long token, long validUntilNanos, @Nullable String payload)
            implements LockState {
        /** Checks the fields. */
        public Held {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(owner, "owner");
        }

        /**
         * A holder without payload.
         *
         * @param name            the lock's name
         * @param owner           the holder's lease owner id
         * @param token           the holder's fencing token
         * @param validUntilNanos when the holder's lease expires unless renewed
         */
        public Held(String name, String owner, long token, long validUntilNanos) {
            this(name, owner, token, validUntilNanos, null);
        }
    }
}
