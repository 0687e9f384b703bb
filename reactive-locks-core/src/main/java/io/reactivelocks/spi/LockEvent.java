package io.reactivelocks.spi;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** A change of one lock, from {@link LockBackend#events}. */
public sealed interface LockEvent permits LockEvent.Subscribed, LockEvent.Acquired, LockEvent.Released, LockEvent.Revoked {

    /** @return the lock name */
    String name();

    /**
     * The store-side subscription is live: changes from now on will be delivered.
     *
     * @param name the lock name
     */
    record Subscribed(String name) implements LockEvent {
        /** Checks the fields. */
        public Subscribed {
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * The lock was granted.
     *
     * @param name  the lock name
     * @param owner the new holder, or {@code null} when the store does not say
     * @param token the new holder's token, or 0 when the store does not say
     */
    record Acquired(String name, @Nullable String owner, long token) implements LockEvent {
        /** Checks the fields. */
        public Acquired {
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * The lock became free: released by its owner, or expired.
     *
     * @param name    the lock name
     * @param owner   the previous holder, or {@code null} when the store does not say
     * @param expired {@code true} when it ended by expiry rather than release
     */
    record Released(String name, @Nullable String owner, boolean expired) implements LockEvent {
        /** Checks the fields. */
        public Released {
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * An operator asked the holder to let go ({@link io.reactivelocks.admin.LockAdmin#revoke}): the
     * holder's {@link io.reactivelocks.Lease#revoked()} emits the reason; nothing else changes.
     *
     * @param name   the lock name
     * @param owner  the holder asked, or {@code null} for whoever holds it
     * @param reason why, in words
     */
    record Revoked(String name, @Nullable String owner, String reason) implements LockEvent {
        /** Checks the fields. */
        public Revoked {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(reason, "reason");
        }
    }
}
